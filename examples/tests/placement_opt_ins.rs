//! The `placement-opt-ins` example runs to completion and shows each opt-in's effect.

use crate::common;

#[test]
fn the_example_shows_every_placement_opt_in() {
    let ran = common::run(env!("CARGO_BIN_EXE_placement-opt-ins"), &[]);
    let out = ran.out();
    // The upstream round and the gated one, in order.
    let upstream = out
        .find("web-decision-1 -> cluster1, cluster2, cluster3\n")
        .unwrap_or_else(|| panic!("upstream decisions missing:\n{out}"));
    let spread = out
        .find("web-decision-1 -> cluster1 (90), cluster4 (40), cluster6 (20)\n")
        .unwrap_or_else(|| panic!("spread decisions missing:\n{out}"));
    assert!(upstream < spread, "{out}");
    for expected in [
        // The re-ranking is held, then written.
        "(held; the controller looks again in 20s)",
        "web-decision-1 -> cluster4 (95), cluster1 (90), cluster6 (20)",
        // A constraint that cannot be met says why.
        "PlacementSatisfied=False (NotAllDecisionsScheduled: 1 cluster decisions unscheduled: \
         spreadConstraints[0] (Label \"region\", maxSkew 1, DoNotSchedule) allows 5 of 6 \
         clusters: east=2, north=1, west=2)",
        // The standard outputs.
        "web-decision-1 (schedulerName open-cluster-management, decision-key web, \
         decision-index 0) -> cluster4, cluster1, cluster6",
        "cluster6   open-cluster-management   True      v1.33.0      \
         region.open-cluster-management.io=north",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    let help = common::run(env!("CARGO_BIN_EXE_placement-opt-ins"), &["--help"]);
    assert!(
        help.out().starts_with("Show the placement opt-ins"),
        "{}",
        help.stdout
    );
}
