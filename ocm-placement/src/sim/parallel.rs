//! Decoding the items of a streamed JSON `List` on several threads.
//!
//! The reading thread cuts the text into items ([`super::stream`]) and hands them out in
//! batches, round robin, to decoding threads; the decoded batches come back in any order and
//! are added to the [`SimInput`] in list order, so the result (objects, their order, the first
//! error) is the one of the one-thread read.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;
use std::sync::mpsc;

use super::{DecodeSeed, Decoded, SimError, SimInput, compact, defaulting, stream, take};
use crate::snapshot::{PreparedCluster, PreparedScore};
use crate::symbols::{PackedSymbols, Sym};

/// Items handed to a decoding thread at a time.
pub(super) const BATCH: usize = 256;

/// Batches waiting for each decoding thread, beyond the one it decodes.
const QUEUE: usize = 2;

/// Items' JSON texts, back to back.
#[derive(Default)]
struct Batch {
    text: Vec<u8>,
    /// Where each item ends in `text`.
    ends: Vec<usize>,
    /// A string table for the decoding thread to fill (it travels with the batch, so its
    /// buffers are reused too).
    symbols: PackedSymbols,
}

impl Batch {
    fn push(&mut self, item: &[u8]) {
        self.text.extend_from_slice(item);
        self.ends.push(self.text.len());
    }

    /// Where each item is in `text`.
    fn ranges(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter().copied()).map(|(s, e)| s..e)
    }

    /// Empties the batch, keeping its buffers for the next one.
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }
}

/// Why an item did not decode.
enum Failure {
    /// It is valid JSON that does not decode into its type: the whole read falls back unless
    /// an earlier item already failed (the items after a failure only have to be valid JSON).
    Type,
    /// It is not valid JSON: the whole read falls back.
    Malformed,
}

/// A batch's items decoded, and the table of the strings its ManagedClusters' entries use
/// (interned by the decoding thread: the adding thread then interns each distinct string of
/// the batch once, not every string of every cluster).
struct Decodings {
    items: Vec<Result<Decoded, Failure>>,
    symbols: PackedSymbols,
    /// The batch, emptied, for the reading thread to fill again (its buffers reach the size
    /// of a batch once; growing a fresh one for every batch cost as much as the copying).
    spare: Batch,
}

/// Adds decoded batches in list order.
struct Merger<'a> {
    source: &'a str,
    batch: usize,
    /// The next batch to add.
    next: usize,
    /// Batches that came back before the ones ahead of them.
    waiting: BTreeMap<usize, Decodings>,
    /// Emptied batches to fill again.
    spares: Vec<Batch>,
}

impl Merger<'_> {
    /// Takes batch `seq`, and adds every batch that is now next. `false` when an item sends
    /// the read to the whole-text path.
    fn take(
        &mut self,
        input: &mut SimInput,
        seq: usize,
        decodings: Decodings,
        first_error: &mut Option<SimError>,
    ) -> bool {
        self.waiting.insert(seq, decodings);
        while let Some(decodings) = self.waiting.remove(&self.next) {
            let Decodings {
                items,
                symbols,
                mut spare,
            } = decodings;
            let base = self.next * self.batch;
            let mut map: Option<Vec<Sym>> = None;
            for (i, decoded) in items.into_iter().enumerate() {
                match decoded {
                    Ok(mut decoded) => {
                        if matches!(decoded, Decoded::Prepared(_) | Decoded::PreparedScore(_)) {
                            let map = map.get_or_insert_with(|| {
                                let table = Arc::make_mut(&mut input.symbols);
                                symbols.strings().map(|s| table.intern(s)).collect()
                            });
                            match &mut decoded {
                                Decoded::Prepared(cluster) => cluster.remap(map),
                                Decoded::PreparedScore(score) => score.remap(map),
                                _ => {}
                            }
                        }
                        input.add_decoded(self.source, base + i + 1, decoded, first_error)
                    }
                    Err(Failure::Type) if first_error.is_some() => {}
                    Err(_) => return false,
                }
            }
            spare.symbols = symbols;
            self.spares.push(spare);
            self.next += 1;
        }
        true
    }
}

/// Scans `reader` as a `List`, its items decoded on `threads` threads, `batch` at a time, and
/// added to `input` in order. An item that sends the read to the whole-text path stops the
/// scan with [`stream::Scan::Item`].
pub(super) fn scan(
    input: &mut SimInput,
    source: &str,
    reader: impl Read,
    threads: usize,
    batch: usize,
    first_error: &mut Option<SimError>,
) -> stream::Scan<()> {
    let plans = Arc::clone(&input.plans);
    let taking = DecodeSeed::taking_plan(&plans);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = mpsc::channel::<(usize, Decodings)>();
        let mut queues = Vec::with_capacity(threads);
        for _ in 0..threads {
            let (tx, rx) = mpsc::sync_channel::<(usize, Batch)>(QUEUE);
            let done = done_tx.clone();
            let plans = Arc::clone(&plans);
            let taking = &taking;
            scope.spawn(move || {
                let seed = DecodeSeed {
                    plans: &plans,
                    taking: Some(taking),
                };
                decode_batches(&seed, rx, &done);
            });
            queues.push(tx);
        }
        drop(done_tx);

        let mut merger = Merger {
            source,
            batch,
            next: 0,
            waiting: BTreeMap::new(),
            spares: Vec::new(),
        };
        let mut pending = Batch::default();
        let mut sent = 0;
        // Hands a full batch out and adds what came back; the next batch to fill, or `None`
        // when an item sends the read to the whole-text path.
        let mut hand_out =
            |full: Batch, input: &mut SimInput, first_error: &mut Option<SimError>| {
                let capacity = (full.text.len(), full.ends.len());
                // Blocks while that thread has a full queue.
                if queues[sent % threads].send((sent, full)).is_err() {
                    return None;
                }
                sent += 1;
                while let Ok((seq, decodings)) = done_rx.try_recv() {
                    if !merger.take(input, seq, decodings, first_error) {
                        return None;
                    }
                }
                Some(merger.spares.pop().unwrap_or_else(|| Batch {
                    text: Vec::with_capacity(capacity.0),
                    ends: Vec::with_capacity(capacity.1),
                    symbols: PackedSymbols::default(),
                }))
            };
        let scan = stream::scan_list(reader, |item| {
            pending.push(item);
            if pending.ends.len() < batch {
                return Ok(());
            }
            match hand_out(std::mem::take(&mut pending), input, first_error) {
                Some(next) => {
                    pending = next;
                    Ok(())
                }
                None => Err(()),
            }
        });
        let stream::Scan::Done(head) = scan else {
            return scan;
        };
        if !pending.ends.is_empty() && hand_out(pending, input, first_error).is_none() {
            return stream::Scan::Item(());
        }
        // The threads end once their queues are closed and drained.
        drop(queues);
        for (seq, decodings) in done_rx {
            if !merger.take(input, seq, decodings, first_error) {
                return stream::Scan::Item(());
            }
        }
        stream::Scan::Done(head)
    })
}

/// A decoding thread: decodes the batches `rx` hands it with `seed`, each item's strings
/// interned in the thread's table, clusters and scores prepared for the scheduler, and sends
/// each batch's decodings to `done` (with the batch's buffers back for reuse) until `rx` is
/// closed or `done` is gone.
fn decode_batches(
    seed: &DecodeSeed<'_>,
    rx: mpsc::Receiver<(usize, Batch)>,
    done: &mpsc::Sender<(usize, Decodings)>,
) {
    let mut scratch = Vec::new();
    for (seq, mut batch) in rx {
        // The batch's strings are interned in this thread's `Taken` table, as
        // they are decoded.
        take::with_taken(|t| {
            t.symbols = std::mem::take(&mut batch.symbols);
            t.symbols.clear();
        });
        // Checked once for the batch, so that each item is read as text rather
        // than bytes whose every string is checked again.
        let text = std::str::from_utf8(&batch.text).ok();
        let items = batch
            .ranges()
            .map(|range| {
                let item = batch.text.get(range.clone()).unwrap_or_default();
                take::with_taken(|t| {
                    t.parts();
                });
                let defaults = defaulting::applied();
                let decoded = match text.and_then(|t| t.get(range)) {
                    Some(item) => seed.decode_str(item),
                    None => seed.decode_slice(item),
                };
                (item, decoded, defaulting::applied() != defaults)
            })
            .map(|(item, decoded, defaulted)| match decoded {
                Ok(Decoded::Cluster(c)) => {
                    // The item's own text is kept when it says all the object
                    // holds; else the object is written out.
                    let own = !defaulted && compact::cluster_text(item, &mut scratch).is_some();
                    let text = own.then(|| scratch.as_slice().into());
                    Ok(Decoded::Prepared(take::with_taken(|t| {
                        let taken = t.parts();
                        PreparedCluster::from_taken(&mut t.symbols, c, taken, text, &mut scratch)
                    })))
                }
                Ok(Decoded::Score(s)) => Ok(Decoded::PreparedScore(take::with_taken(|t| {
                    PreparedScore::new(&mut t.symbols, &s)
                }))),
                Ok(decoded) => Ok(decoded),
                Err(_) => Err(
                    match serde_json::from_slice::<serde::de::IgnoredAny>(item) {
                        Ok(_) => Failure::Type,
                        Err(_) => Failure::Malformed,
                    },
                ),
            })
            .collect();
        let symbols = take::with_taken(|t| std::mem::take(&mut t.symbols));
        batch.clear();
        let decodings = Decodings {
            items,
            symbols,
            spare: batch,
        };
        if done.send((seq, decodings)).is_err() {
            return;
        }
    }
}
