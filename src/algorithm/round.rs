//! One fan-out round: the same command sent to every node, all at once or one after
//! another, each with the request timeout, and the replies counted.
//!
//! Every phase of the Redlock family is such a round: the lock attempt (seed 002 steps 2
//! and 3), the fencing-token rounds and the extension. The state machines in this folder
//! own the decision (quorum, validity, what to do next); a [`Round`] only sends, matches
//! replies by request id, times out, and reports when no request is pending any more.

use super::{Fanout, NodeSet, Now, Output, ReqId, TimerId};
use crate::command::{Cmd, NodeId, Reply};

/// Request ids and timers of one client's algorithm. The attempt counter `seq` sits in
/// the upper bits of every request id, so replies to an earlier round are ignored.
#[derive(Clone, Hash)]
pub(super) struct Net {
    pub nodes: usize,
    seq: u64,
    next_timer: TimerId,
}

/// What became of an event fed to a round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Progress {
    /// Not for this round (stale reply or timer).
    Ignored,
    /// Counted; requests are still pending.
    Waiting,
    /// Every node has answered or timed out.
    Done,
}

#[derive(Clone, Hash)]
pub(super) struct Round {
    cmd: Cmd,
    request_timeout_us: u64,
    /// When the round started, by the client's monotonic clock.
    pub t1_mono_us: u64,
    /// Nodes whose reply was a grant (as the caller's `granted` judged it).
    pub acked: NodeSet,
    pub timed_out: NodeSet,
    /// The largest `Int` reply of a granting node (the fencing counter).
    pub max_int: i64,
    pending: NodeSet,
    next_node: NodeId,
    timer: TimerId,
    seq: u64,
}

impl Net {
    pub fn new(nodes: usize) -> Self {
        Net {
            nodes,
            seq: 0,
            next_timer: 0,
        }
    }

    fn req(&self, node: NodeId) -> ReqId {
        (self.seq << 8) | node as u64
    }

    /// Arms a timer at `at_mono_us` and returns its id.
    pub fn timer(&mut self, at_mono_us: u64, out: &mut Vec<Output>) -> TimerId {
        self.next_timer += 1;
        out.push(Output::Timer {
            id: self.next_timer,
            at_mono_us,
        });
        self.next_timer
    }

    /// Sends `cmd` to every node without awaiting replies (unlocks, queue cleanup):
    /// a new `seq` makes their replies stale.
    pub fn send_all(&mut self, cmd: Cmd, out: &mut Vec<Output>) {
        self.seq += 1;
        for node in 0..self.nodes {
            out.push(Output::Send {
                node,
                req: self.req(node),
                cmd,
            });
        }
    }

    /// Starts a round of `cmd` at `now`, waiting `request_timeout_us` for each node.
    pub fn start(
        &mut self,
        now: Now,
        cmd: Cmd,
        fanout: Fanout,
        request_timeout_us: u64,
        out: &mut Vec<Output>,
    ) -> Round {
        self.seq += 1;
        let mut round = Round {
            cmd,
            request_timeout_us,
            t1_mono_us: now.mono_us,
            acked: NodeSet::default(),
            timed_out: NodeSet::default(),
            max_int: 0,
            pending: NodeSet::default(),
            next_node: 0,
            timer: 0,
            seq: self.seq,
        };
        match fanout {
            Fanout::Parallel => {
                for node in 0..self.nodes {
                    self.send(&mut round, node, out);
                }
                round.next_node = self.nodes;
                round.timer = self.timer(now.mono_us + request_timeout_us, out);
            }
            Fanout::Sequential => self.send_next(now, &mut round, out),
        }
        round
    }

    fn send(&self, round: &mut Round, node: NodeId, out: &mut Vec<Output>) {
        round.pending.insert(node);
        out.push(Output::Send {
            node,
            req: self.req(node),
            cmd: round.cmd,
        });
    }

    fn send_next(&mut self, now: Now, round: &mut Round, out: &mut Vec<Output>) {
        let node = round.next_node;
        round.next_node += 1;
        self.send(round, node, out);
        round.timer = self.timer(now.mono_us + round.request_timeout_us, out);
    }

    /// After a step: ask the next node (sequential fan-out), or report the round done.
    fn step_done(&mut self, now: Now, round: &mut Round, out: &mut Vec<Output>) -> Progress {
        if round.next_node < self.nodes {
            self.send_next(now, round, out);
            Progress::Waiting
        } else {
            Progress::Done
        }
    }

    /// Counts a reply; `granted` says whether it is a success for this round.
    pub fn on_reply(
        &mut self,
        round: &mut Round,
        now: Now,
        req: ReqId,
        reply: Reply,
        granted: impl Fn(Reply) -> bool,
        out: &mut Vec<Output>,
    ) -> Progress {
        let node = (req & 0xff) as NodeId;
        if req >> 8 != round.seq || !round.pending.contains(node) {
            return Progress::Ignored;
        }
        round.pending.remove(node);
        if granted(reply) {
            round.acked.insert(node);
            if let Reply::Int(v) = reply {
                round.max_int = round.max_int.max(v);
            }
        }
        if round.pending.is_empty() {
            self.step_done(now, round, out)
        } else {
            Progress::Waiting
        }
    }

    /// The round's request timeout: pending nodes count as not granted.
    pub fn on_timer(&mut self, round: &mut Round, now: Now, id: TimerId, out: &mut Vec<Output>) -> Progress {
        if id != round.timer {
            return Progress::Ignored;
        }
        round.timed_out.0 |= round.pending.0;
        round.pending = NodeSet::default();
        self.step_done(now, round, out)
    }
}
