//! Provenance: what made a page, as Jepsen's store records what it tested. Every page
//! lockstorm writes names lockstorm's version and the commit it was built from, the
//! date it was made (UTC), the redis-server it ran against when a real backend ran, and
//! the exact command that makes it again.
//!
//! The commit comes from the build (build.rs sets `LOCKSTORM_COMMIT`): it is the same
//! for every run of one binary, so it may sit in summary.json and sweep.json, which the
//! same seeds write byte for byte. The date is the wall clock's: a run's goes to
//! timing.json beside the wall-clock figures ([`super::timing`]), never into a file two
//! runs of the same seeds must write alike (tests/shard.rs compares a run's pages with
//! its merged shards', tests/determinism.rs its history).

use super::words::esc;
use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// lockstorm's version, from Cargo.toml.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit lockstorm was built from: 12 hex digits, `-dirty` when its sources
/// differed from that commit, `unknown` when it was not built from a git checkout.
pub const COMMIT: &str = env!("LOCKSTORM_COMMIT");

/// "lockstorm 0.1.0 (commit 0123456789ab)".
pub fn lockstorm() -> String {
    named(VERSION, COMMIT)
}

/// "lockstorm VERSION (commit COMMIT)", for a version and commit a file recorded.
pub fn named(version: &str, commit: &str) -> String {
    format!("lockstorm {version} (commit {commit})")
}

/// Now, in UTC, as [`utc`] writes it.
pub fn now_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc(secs)
}

/// Seconds since the Unix epoch as an ISO 8601 UTC time, "2026-11-29T12:55:03Z".
pub fn utc(unix_secs: u64) -> String {
    let (days, rest) = (unix_secs / 86_400, unix_secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// The proleptic Gregorian date of a day count from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`), so that no date crate is needed for one line.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// What made a page that is not one run's (the analysis index, a matrix, a sweep): one
/// line at its foot. A run's page has the same facts in its table, from summary.json
/// and timing.json.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub lockstorm: String,
    pub commit: String,
    /// When it was made (UTC); `None` in a file that must not depend on the wall clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_utc: Option<String>,
    /// The local redis-server's `--version`, when a real backend ran (`None` on the
    /// simulator).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis_server: Option<String>,
    /// Whether it ran on real servers: with no `redis_server`, they were not lockstorm's
    /// own (containers, external nodes).
    #[serde(default)]
    pub real: bool,
    /// The command that makes it again.
    pub command: String,
}

impl Provenance {
    /// This binary's provenance, dated now; with the local redis-server's version when
    /// `real`.
    pub fn now(command: String, real: bool) -> Provenance {
        Provenance {
            date_utc: Some(now_utc()),
            ..Provenance::undated(command, real)
        }
    }

    /// [`Provenance::now`] without the date, for a file two runs must write alike.
    pub fn undated(command: String, real: bool) -> Provenance {
        Provenance {
            lockstorm: VERSION.into(),
            commit: COMMIT.into(),
            date_utc: None,
            redis_server: if real {
                crate::real::server::version()
            } else {
                None
            },
            real,
            command,
        }
    }

    /// What it ran on and with what, in words: "lockstorm 0.1.0 (commit …), on
    /// 2026-11-29T12:55:03Z, redis-server 7.0.15".
    fn what(&self) -> String {
        let mut parts = vec![named(&self.lockstorm, &self.commit)];
        if let Some(d) = &self.date_utc {
            parts.push(format!("on {d}"));
        }
        parts.push(match (&self.redis_server, self.real) {
            (Some(r), _) => format!("redis-server {r}"),
            (None, true) => "real servers lockstorm did not start (version not recorded)".into(),
            (None, false) => "the simulator (no redis-server)".into(),
        });
        parts.join(", ")
    }

    /// The line at the foot of an HTML page.
    pub fn html(&self) -> String {
        format!(
            "<p class=\"provenance\"><small>Made by {}. Made again by <code>{}</code>.</small></p>\n",
            esc(&self.what()),
            esc(&self.command)
        )
    }

    /// The line at the foot of a markdown page.
    pub fn markdown(&self) -> String {
        format!("Made by {}. Made again by `{}`.\n", self.what(), self.command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commit_is_twelve_hex_digits_maybe_dirty_or_unknown() {
        let hex = COMMIT.strip_suffix("-dirty").unwrap_or(COMMIT);
        assert!(
            COMMIT == "unknown" || (hex.len() == 12 && hex.bytes().all(|b| b.is_ascii_hexdigit())),
            "{COMMIT}"
        );
        assert_eq!(lockstorm(), format!("lockstorm {VERSION} (commit {COMMIT})"));
    }

    #[test]
    fn the_commit_is_the_checkouts_head_when_built_from_one() {
        // Built from a git checkout (as the tests are), the commit is its HEAD.
        let dir = env!("CARGO_MANIFEST_DIR");
        let head = std::process::Command::new("git")
            .args(["-C", dir, "rev-parse", "--short=12", "HEAD"])
            .output();
        if let Some(out) = head.ok().filter(|o| o.status.success()) {
            let head = String::from_utf8(out.stdout).unwrap();
            assert!(COMMIT.starts_with(head.trim()), "{COMMIT} is not HEAD {head}");
        }
    }

    #[test]
    fn utc_dates_match_known_instants() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day of a century divisible by 400), 12:34:56.
        assert_eq!(utc(951_827_696), "2000-02-29T12:34:56Z");
        assert_eq!(utc(1_709_251_199), "2024-02-29T23:59:59Z");
        assert_eq!(utc(1_709_251_200), "2024-03-01T00:00:00Z");
        assert_eq!(utc(4_102_444_800), "2100-01-01T00:00:00Z");
        let now = now_utc();
        assert!(
            now.len() == 20 && now.ends_with('Z') && now.as_str() > "2024",
            "{now}"
        );
    }

    #[test]
    fn the_line_names_version_commit_date_server_and_command() {
        let p = Provenance {
            lockstorm: "0.1.0".into(),
            commit: "0123456789ab-dirty".into(),
            date_utc: Some("2026-11-29T12:55:03Z".into()),
            redis_server: Some("7.0.15".into()),
            real: true,
            command: "cargo run --release -- matrix --seeds 10 <x>".into(),
        };
        assert_eq!(
            p.markdown(),
            "Made by lockstorm 0.1.0 (commit 0123456789ab-dirty), on 2026-11-29T12:55:03Z, \
             redis-server 7.0.15. Made again by `cargo run --release -- matrix --seeds 10 <x>`.\n"
        );
        assert!(p
            .html()
            .contains("<code>cargo run --release -- matrix --seeds 10 &lt;x&gt;</code>"));
        let sim = Provenance {
            date_utc: None,
            redis_server: None,
            real: false,
            ..p.clone()
        };
        assert!(
            sim.markdown().starts_with(
                "Made by lockstorm 0.1.0 (commit 0123456789ab-dirty), the simulator (no redis-server)."
            ),
            "{}",
            sim.markdown()
        );
        let undated = Provenance::undated("c".into(), false);
        assert_eq!((undated.commit.as_str(), undated.date_utc), (COMMIT, None));
    }
}
