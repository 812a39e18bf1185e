//! Numbers and lists as the reports write them: `1.204 s`, `250.0 ms`, `0,1,2`, `nodes`.

/// Seconds with millisecond precision, e.g. `1.204 s`.
pub fn secs(us: u64) -> String {
    format!("{:.3} s", us as f64 / 1e6)
}

/// A duration in the unit that reads best.
pub fn span(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.3} s", us as f64 / 1e6)
    } else if us >= 1_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{us} µs")
    }
}

pub fn list(items: &[usize]) -> String {
    items.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

pub fn plural(word: &str, n: usize) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}
