//! Where a key is in a scenario file, so an error about its value names the line.
//!
//! Values are checked against each other after serde has read them, when positions are
//! gone; [`line_of`] finds the key again in the text with `toml_edit`, which keeps a
//! span for every item. A key path is dotted, with indices for arrays of tables:
//! `algorithm.quorum`, `faults[2].node`, `nemesis.partition.interval`. A key the file
//! leaves to its default is answered with the line of the nearest table around it
//! that the file does write (`[algorithm]`), or nothing.

use toml_edit::{ImDocument, TableLike};

/// The 1-based line of `key` in `text`, or of the closest enclosing item written.
pub(super) fn line_of(text: &str, key: &str) -> Option<usize> {
    let doc = ImDocument::parse(text).ok()?;
    let mut table: Option<&dyn TableLike> = Some(doc.as_table());
    let mut best = None;
    for (name, index) in segments(key) {
        let Some(item) = table.and_then(|t| t.get(name)) else {
            break;
        };
        best = item.span().map(|s| s.start).or(best);
        table = item.as_table_like();
        if let Some(i) = index {
            let Some(t) = item.as_array_of_tables().and_then(|a| a.get(i)) else {
                break;
            };
            best = t.span().map(|s| s.start).or(best);
            table = Some(t);
        }
    }
    best.map(|offset| text[..offset.min(text.len())].matches('\n').count() + 1)
}

/// `faults[2].node` → `("faults", Some(2))`, `("node", None)`.
fn segments(key: &str) -> impl Iterator<Item = (&str, Option<usize>)> {
    key.split('.').map(|part| match part.split_once('[') {
        Some((name, rest)) => (name, rest.trim_end_matches(']').parse().ok()),
        None => (part, None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "nodes = 3\n\n[algorithm]\nttl = \"1s\"\nquorum = 4\n\n[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 0\n\n[[faults]]\nat = \"2s\"\nkind = \"crash\"\nnode = 9\n\n[nemesis]\npartition = { interval = \"1us\", duration = \"1s\" }\n";

    #[test]
    fn finds_keys_in_tables_arrays_of_tables_and_inline_tables() {
        assert_eq!(line_of(TEXT, "nodes"), Some(1));
        assert_eq!(line_of(TEXT, "algorithm.quorum"), Some(5));
        assert_eq!(line_of(TEXT, "faults[1].node"), Some(15));
        assert_eq!(line_of(TEXT, "faults[0].node"), Some(10));
        assert_eq!(line_of(TEXT, "nemesis.partition.interval"), Some(18));
    }

    #[test]
    fn a_defaulted_key_points_at_the_table_around_it() {
        assert_eq!(line_of(TEXT, "algorithm.drift_factor"), Some(3));
        assert_eq!(line_of(TEXT, "faults[1].duration"), Some(12));
        assert_eq!(line_of(TEXT, "clients.count"), None);
        assert_eq!(line_of("not [toml", "nodes"), None);
    }
}
