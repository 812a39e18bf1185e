//! The largest numbers lockstorm takes from any input, and why: no scenario file and no
//! history may make it allocate or compute without bound.
//!
//! Scenarios are checked against these when they are resolved ([`crate::scenario`]),
//! histories when the checker reads them ([`crate::checker`]), before anything is sized
//! by a number from the input. A report has a row per node and client and a shaded span
//! per fault, the checker keeps per-node state for every failed acquisition, and every
//! fault is two history lines: these bounds keep each of those in the range a person can
//! read and a laptop can hold.

/// Nodes of a run: Redlock deployments use 3 to 9; 64 leaves room for experiments.
pub const MAX_NODES: usize = 64;

/// Clients of a run (each is a row of the report and a link to every node).
pub const MAX_CLIENTS: usize = 10_000;

/// The longest time anything in a scenario or a history may take or say, in
/// microseconds: 10^15 us, about 31 years. Sums of a few such times still fit in a u64.
pub const MAX_TIME_US: u64 = 1_000_000_000_000_000;

/// Faults a run may plan, scripted and random together: the nemesis is refused when its
/// intervals average out to more over the run. Each fault is checked against every
/// failed acquisition it overlaps and drawn in every plot; the busiest scenario in
/// `scenarios/` plans about 1,200.
pub const MAX_PLANNED_FAULTS: usize = 10_000;

/// The nemesis stops planning at this many faults, whatever its draws: an average at the
/// limit can still draw a few more by chance, never twice as many.
pub const MAX_DRAWN_FAULTS: usize = 2 * MAX_PLANNED_FAULTS;

/// The longest line of a history file, in bytes: an event is a few hundred bytes; a
/// longer line is refused before it is parsed (a 1 GB line would cost gigabytes).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest name, in bytes: a scenario's `name` (a folder under reports/) and every
/// lock name in a history.
pub const MAX_NAME_BYTES: usize = 255;

/// The largest history.jsonl a run writes unless told otherwise (`--max-history`): a
/// run whose expected event rate would pass it is refused before it starts, and one
/// that passes it anyway is stopped with its history so far.
pub const DEFAULT_MAX_HISTORY_BYTES: u64 = 4 << 30;

/// Checks a scenario name: one path component (it names the report folder), at most
/// [`MAX_NAME_BYTES`] bytes; the message says what is wrong.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "name is {} bytes long: at most {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    let mut parts = std::path::Path::new(name).components();
    let single = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    );
    if !single || name.contains('/') || name.contains('\0') {
        return Err(format!(
            "name = {name:?}: a name is one folder name under reports/ (no '/', '.' or '..')"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_path_component() {
        for bad in ["../../../x", "/etc", "a/b", ".", "..", "", "x/", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?} passed");
        }
        assert!(check_name(&"n".repeat(MAX_NAME_BYTES + 1)).is_err());
        for good in ["partition", "redlock chaos", "a.b", "..x"] {
            assert_eq!(check_name(good), Ok(()), "{good:?}");
        }
    }
}
