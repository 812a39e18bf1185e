//! Where a run's history goes as it is made: both drivers push every event into a
//! [`Sink`] the moment it happens, never into a list of their own.
//!
//! A `Vec<Event>` is a sink (the history in memory, for the checker and the report), a
//! [`JsonlFile`] is one (the history on disk, one line per event, written through as it
//! comes, so a run stopped by a signal, an error or SIGKILL leaves what it recorded),
//! and [`Tee`] feeds two. The checker is one too ([`crate::run`] wraps it): a simulated
//! seed whose history nobody reads is judged event by event and kept nowhere, and the
//! reported seed's history goes to its file and the checker at once, so a run of any
//! length needs memory for the checker's records (one per hold, for the report), not
//! for its events.

use crate::history::Event;
use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::{Path, PathBuf};

/// Takes the events of a history, in order.
pub trait Sink {
    fn push(&mut self, event: Event);
}

impl Sink for Vec<Event> {
    fn push(&mut self, event: Event) {
        Vec::push(self, event);
    }
}

/// A sink that may not be there (no file asked for).
impl<S: Sink> Sink for Option<S> {
    fn push(&mut self, event: Event) {
        if let Some(sink) = self {
            sink.push(event);
        }
    }
}

/// Both sinks get every event.
pub struct Tee<A, B>(pub A, pub B);

impl<A: Sink, B: Sink> Sink for Tee<A, B> {
    fn push(&mut self, event: Event) {
        self.0.push(event.clone());
        self.1.push(event);
    }
}

/// A history file written as the run goes: each event is on disk (in the kernel's hands)
/// once its line is complete, so nothing recorded is lost if lockstorm is killed.
pub struct JsonlFile {
    path: PathBuf,
    out: LineWriter<File>,
    /// The line being written, kept between events so serializing one allocates nothing.
    line: Vec<u8>,
    /// The first write error; later events are dropped and [`JsonlFile::finish`]
    /// reports it (a driver cannot stop mid-event to handle it).
    error: Option<std::io::Error>,
    /// Bytes written so far, and the most it may write
    /// ([`crate::limits::max_history_bytes`]).
    written: u64,
    limit: u64,
}

impl JsonlFile {
    /// Creates (or truncates) the file, which may grow to
    /// [`crate::limits::max_history_bytes`].
    pub fn create(path: &Path) -> std::io::Result<JsonlFile> {
        JsonlFile::with_limit(path, crate::limits::max_history_bytes())
    }

    /// Creates (or truncates) the file, which may grow to `limit` bytes.
    pub fn with_limit(path: &Path, limit: u64) -> std::io::Result<JsonlFile> {
        Ok(JsonlFile {
            path: path.to_path_buf(),
            out: LineWriter::new(File::create(path)?),
            line: Vec::with_capacity(256),
            error: None,
            written: 0,
            limit,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the last line and reports the first write error, if any.
    pub fn finish(mut self) -> std::io::Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
    }
}

impl Sink for JsonlFile {
    fn push(&mut self, event: Event) {
        if self.error.is_some() {
            return;
        }
        // One write per line: LineWriter passes a complete line straight to the file.
        self.line.clear();
        serde_json::to_writer(&mut self.line, &event).expect("an event always serializes");
        self.line.push(b'\n');
        self.written += self.line.len() as u64;
        if self.written > self.limit {
            self.error = Some(std::io::Error::other(format!(
                "the history reached its limit of {} MB (--max-history-mb); later events were not written",
                self.limit >> 20
            )));
            return;
        }
        if let Err(e) = self.out.write_all(&self.line) {
            self.error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::read_jsonl;

    fn heal(t_us: u64) -> Event {
        Event::Heal { t_us }
    }

    #[test]
    fn every_event_is_in_the_file_before_the_sink_is_finished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let mut sink = Tee(Vec::new(), JsonlFile::create(&path).unwrap());
        sink.push(heal(1));
        sink.push(heal(2));
        // Read while the sink is still open: a killed run leaves exactly this.
        assert_eq!(read_jsonl(&path).unwrap(), vec![heal(1), heal(2)]);
        let Tee(memory, file) = sink;
        file.finish().unwrap();
        assert_eq!(memory, vec![heal(1), heal(2)]);
    }

    #[test]
    fn a_history_past_its_size_limit_stops_there_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let line = serde_json::to_string(&heal(1)).unwrap().len() as u64 + 1;
        let mut sink = JsonlFile::with_limit(&path, 2 * line).unwrap();
        for t in 0..10 {
            sink.push(heal(t));
        }
        let e = sink.finish().unwrap_err().to_string();
        assert!(e.contains("--max-history-mb"), "{e}");
        assert_eq!(read_jsonl(&path).unwrap().len(), 2);
    }

    #[test]
    fn a_write_error_is_reported_at_the_end() {
        let mut sink = JsonlFile::create(Path::new("/dev/full")).unwrap();
        sink.push(heal(1));
        sink.push(heal(2));
        assert!(sink.finish().is_err());
    }
}
