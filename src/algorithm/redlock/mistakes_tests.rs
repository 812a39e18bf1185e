//! Step-by-step tests of the client mistakes (`algorithm::Mistakes`): which commands
//! each variant sends, and what it believes afterwards.

use super::tests::{now, sends};
use super::*;
use crate::algorithm::{Fanout, Mistakes, Release, TokenScope};
use crate::command::Key;

fn config(mistakes: Mistakes) -> AlgorithmConfig {
    AlgorithmConfig {
        retry_count: 0,
        max_extensions: 2,
        mistakes,
        ..super::tests::config(Fanout::Parallel)
    }
}

fn answer(r: &mut Redlock, out: &[Output], t: u64, reply: Reply) -> Vec<Output> {
    let mut next = Vec::new();
    for (_, req, _) in sends(out) {
        r.on_reply(now(t), req, reply, &mut next);
    }
    next
}

/// A machine holding L0 (acquired at 0, all five nodes granting at 1 ms), and its token.
fn holding(mistakes: Mistakes) -> (Redlock, Token) {
    let mut r = Redlock::new(config(mistakes), 5, crate::rng::split(1, "test", 0));
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Exclusive, &mut out);
    match answer(&mut r, &out, 1_000, Reply::Ok).last() {
        Some(&Output::Acquired { token, .. }) => (r, token),
        other => panic!("expected Acquired, got {other:?}"),
    }
}

#[test]
fn release_del_sends_plain_del_on_release_and_after_a_failed_attempt() {
    let del = Mistakes {
        release: Release::Del,
        ..Mistakes::default()
    };
    let (mut r, _) = holding(del);
    let mut out = Vec::new();
    r.release(now(10_000), &mut out);
    let key = Key::plain(LockId(0));
    assert!(
        sends(&out).iter().all(|(_, _, c)| *c == Cmd::Del { key }),
        "{out:?}"
    );

    // Refused everywhere: the unlock of the failed attempt deletes the holder's key.
    let mut out = Vec::new();
    r.acquire(now(20_000), LockId(0), Mode::Exclusive, &mut out);
    let out = answer(&mut r, &out, 21_000, Reply::Nil);
    let unlocks = sends(&out);
    assert_eq!(unlocks.len(), 5);
    assert!(unlocks.iter().all(|(_, _, c)| *c == Cmd::Del { key }));
}

#[test]
fn extend_pexpire_trusts_its_replies_even_after_the_old_deadline() {
    let pexpire = Mistakes {
        extend: Extend::Pexpire,
        ..Mistakes::default()
    };
    let (mut r, _) = holding(pexpire);
    // Validity ended at 988 ms; the client extends at 1.5 s (it was paused, say).
    let mut out = Vec::new();
    r.extend(now(1_500_000), &mut out);
    let key = Key::plain(LockId(0));
    assert!(sends(&out)
        .iter()
        .all(|(_, _, c)| *c == Cmd::PExpire { key, ttl_ms: 1_000 }));
    let out = answer(&mut r, &out, 1_501_000, Reply::Int(1));
    assert!(
        matches!(
            out.last(),
            Some(Output::Extended {
                valid_until_mono_us: 2_488_000,
                ..
            })
        ),
        "{out:?}"
    );

    // The compare script's extension at the same moment is no extension.
    let (mut r, token) = holding(Mistakes::default());
    let mut out = Vec::new();
    r.extend(now(1_500_000), &mut out);
    let out = answer(&mut r, &out, 1_501_000, Reply::Int(1));
    assert_eq!(out, vec![Output::NotExtended { token }]);
}

#[test]
fn a_per_client_token_is_the_same_for_every_acquisition() {
    let tokens = |scope: TokenScope| {
        let (mut r, first) = holding(Mistakes {
            token: scope,
            ..Mistakes::default()
        });
        let mut out = Vec::new();
        r.release(now(10_000), &mut out);
        let mut out = Vec::new();
        r.acquire(now(20_000), LockId(0), Mode::Exclusive, &mut out);
        let second = match sends(&out)[0].2 {
            Cmd::SetNxPx { token, .. } => token,
            other => panic!("{other:?}"),
        };
        (first, second)
    };
    let (a, b) = tokens(TokenScope::PerClient);
    assert_eq!(a, b);
    let (a, b) = tokens(TokenScope::Random);
    assert_ne!(a, b);
}
