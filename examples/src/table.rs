//! Tables laid out as kubectl lays them out.
//!
//! kubectl prints tables through Go's `text/tabwriter` with a minimum cell width of 6, a
//! padding of 3 spaces and the last column left unpadded; headers are upper case. [`Table`]
//! reproduces that layout, so output reads (and can be compared) like `kubectl get` or
//! `clusteradm get ... -o table`.

use std::fmt;

/// The smallest width of a padded cell (Go tabwriter's `minwidth` in kubectl).
const MIN_WIDTH: usize = 6;
/// Spaces after the widest cell of a column.
const PADDING: usize = 3;

/// A table with a header and rows of text cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names (printed upper case).
    pub fn new<I, S>(columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            header: columns
                .into_iter()
                .map(|c| c.into().to_uppercase())
                .collect(),
            rows: Vec::new(),
        }
    }

    /// A table whose column names print exactly as given (for names that are identifiers,
    /// such as status feedback names).
    pub fn verbatim<I, S>(columns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            header: columns.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// The offset, in characters, at which column `index` starts on every line.
    pub fn column_offset(&self, index: usize) -> usize {
        self.widths().iter().take(index).sum()
    }

    fn widths(&self) -> Vec<usize> {
        let columns = self.header.len();
        let width = |i: usize| {
            std::iter::once(&self.header)
                .chain(self.rows.iter())
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        };
        (0..columns)
            .map(|i| (width(i) + PADDING).max(MIN_WIDTH))
            .collect()
    }

    /// Appends a row. Missing cells print empty; cells beyond the header are dropped, as
    /// kubectl drops them.
    pub fn row<I, S>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells
            .into_iter()
            .take(self.header.len())
            .map(|c| one_line(&c.into()))
            .collect();
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
        self
    }

    /// The number of rows (the header excluded).
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the table has no row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}

/// kubectl prints a cell up to its first line break.
fn one_line(cell: &str) -> String {
    cell.split(['\n', '\r', '\x0c'])
        .next()
        .unwrap_or_default()
        .to_string()
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let columns = self.header.len();
        let widths = self.widths();
        for row in std::iter::once(&self.header).chain(self.rows.iter()) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                line.push_str(cell);
                if i + 1 < columns {
                    let pad = widths[i].saturating_sub(cell.chars().count());
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            writeln!(f, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lays_out_like_kubectl() {
        // The `clusteradm get clusters` output of the documentation.
        let mut t = Table::new([
            "Name",
            "Accepted",
            "Available",
            "ClusterSet",
            "CPU",
            "Memory",
            "Kubernetes Version",
        ]);
        t.row([
            "cluster1",
            "true",
            "True",
            "default",
            "24",
            "49265496Ki",
            "v1.23.4",
        ]);
        assert_eq!(
            t.to_string(),
            "NAME       ACCEPTED   AVAILABLE   CLUSTERSET   CPU   MEMORY       KUBERNETES VERSION\n\
             cluster1   true       True        default      24    49265496Ki   v1.23.4\n"
        );
    }

    #[test]
    fn short_columns_keep_the_minimum_width_and_rows_are_padded() {
        let mut t = Table::new(["A", "B", "C"]);
        t.row(["x"]);
        t.row(["a\nsecond line", "b", "c", "dropped"]);
        assert_eq!(t.to_string(), "A     B     C\nx\na     b     c\n");
        assert_eq!(t.len(), 2);
        assert_eq!(t.column_offset(2), 12);
        let v = Table::verbatim(["name", "ReadyReplicas"]);
        assert_eq!(v.to_string(), "name   ReadyReplicas\n");
    }
}
