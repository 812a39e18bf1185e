//! Local parallelism: independent work items (seeds, grid cells) spread over `jobs`
//! threads, results returned in item order. Each item is a deterministic simulation on
//! its own, so the results do not depend on `jobs` or on how the threads interleave;
//! only the order in which items finish does, and nothing but progress sees that.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The default for `--jobs`: every core this process may use.
pub fn all_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `work(i, &items[i])` for every item on at most `jobs` threads and returns the
/// results in item order; `finished(n)` is called each time an item finishes, with the
/// number finished so far.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    work: impl Fn(usize, &T) -> R + Sync,
    finished: impl Fn(usize) + Sync,
) -> Vec<R> {
    let slots: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let threads = jobs.clamp(1, items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let result = work(i, item);
                slots.lock().expect("no worker panicked")[i] = Some(result);
                finished(done.fetch_add(1, Ordering::Relaxed) + 1);
            });
        }
    });
    slots
        .into_inner()
        .expect("no worker panicked")
        .into_iter()
        .map(|r| r.expect("every item ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_item_order_whatever_the_thread_count() {
        let items: Vec<u64> = (0..50).collect();
        let square = |_: usize, x: &u64| x * x;
        let one = map(&items, 1, square, |_| {});
        for jobs in [2, 3, 8, 100] {
            assert_eq!(map(&items, jobs, square, |_| {}), one, "jobs {jobs}");
        }
        let calls = AtomicUsize::new(0);
        map(&items, 4, square, |_| {
            calls.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(calls.into_inner(), 50);
        assert!(map(&[] as &[u64], 4, square, |_| {}).is_empty());
    }
}
