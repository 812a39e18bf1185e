//! A history's fault spans still open, by fault id: the checker, its fault-tolerance
//! judge and the report each record a span per `start` line, and an `end` line ends the
//! latest begun of its id still open. A nemesis may keep thousands open at once (a
//! fault drawn every microsecond, each lasting seconds), so an end finds its span by
//! id, without a scan of the spans.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct OpenSpans(BTreeMap<usize, Vec<usize>>);

impl OpenSpans {
    /// Whether no span is open (an id whose last span ends is removed).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The span numbered `index` (by its reader) of fault `id` began.
    pub fn begin(&mut self, id: usize, index: usize) {
        self.0.entry(id).or_default().push(index);
    }

    /// Fault `id` ended: the span that ends (the latest begun of that id and still
    /// open), or `None` if none of that id is open.
    pub fn end(&mut self, id: usize) -> Option<usize> {
        let open = self.0.get_mut(&id)?;
        let index = open.pop();
        if open.is_empty() {
            self.0.remove(&id);
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_end_ends_the_latest_open_span_of_its_id() {
        let mut open = OpenSpans::default();
        open.begin(7, 0);
        open.begin(3, 1);
        open.begin(7, 2);
        assert_eq!(open.end(7), Some(2));
        assert_eq!(open.end(7), Some(0));
        assert_eq!(open.end(7), None, "no span of id 7 is open");
        assert_eq!(open.end(5), None, "no fault 5 began");
        assert_eq!(open.end(3), Some(1));
    }
}
