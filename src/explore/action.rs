//! The explorer's transitions: run one tick, or start or end a fault at the boundary
//! (which of them are enabled in a world, and taking one, is `adversary.rs`'s).
//!
//! Faults at one boundary mostly commute (cutting link a then b gives the world cutting
//! b then a does), and exploring every order would multiply the states for nothing. A
//! partial-order reduction keeps one order: after fault `a`, fault `b` may follow at the
//! same boundary only if `b > a` in the [`Action`] order or `b` depends on `a` (shares a
//! node or a client with it, or either resumes a process, which runs it at once). Every
//! set of faults at a boundary still happens in some allowed order: the order that
//! always takes the least fault whose dependencies are done (if `b < a` followed `a`
//! there without depending on it, `b` would have been taken first).

/// A transition. Faults carry their target: `u8` node and client indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Crash(u8),
    Failover(u8),
    Cut(u8, u8),
    PauseNode(u8),
    PauseClient(u8),
    Jump(u8),
    Restart(u8),
    Promote(u8),
    Heal(u8, u8),
    ResumeNode(u8),
    ResumeClient(u8),
    /// Run the world to the next boundary.
    Tick,
}

impl Action {
    /// The node a fault concerns (0 for client faults; see [`Action::client`]).
    pub fn node(self) -> usize {
        match self {
            Action::Crash(n)
            | Action::Failover(n)
            | Action::PauseNode(n)
            | Action::Jump(n)
            | Action::Restart(n)
            | Action::Promote(n)
            | Action::ResumeNode(n)
            | Action::Cut(_, n)
            | Action::Heal(_, n) => usize::from(n),
            Action::PauseClient(_) | Action::ResumeClient(_) | Action::Tick => 0,
        }
    }

    /// The client a fault concerns (0 for node faults).
    pub fn client(self) -> usize {
        match self {
            Action::Cut(c, _) | Action::Heal(c, _) | Action::PauseClient(c) | Action::ResumeClient(c) => {
                usize::from(c)
            }
            _ => 0,
        }
    }

    pub fn is_client_pause(self) -> bool {
        matches!(self, Action::PauseClient(_) | Action::ResumeClient(_))
    }

    fn nodes_touched(self) -> Option<usize> {
        match self {
            Action::PauseClient(_) | Action::ResumeClient(_) | Action::Tick => None,
            _ => Some(self.node()),
        }
    }

    fn clients_touched(self) -> Option<usize> {
        match self {
            Action::Cut(..) | Action::Heal(..) | Action::PauseClient(_) | Action::ResumeClient(_) => {
                Some(self.client())
            }
            _ => None,
        }
    }

    fn resumes(self) -> bool {
        matches!(self, Action::ResumeNode(_) | Action::ResumeClient(_))
    }

    /// Whether the order of `self` and `other` at one boundary can matter.
    pub fn depends_on(self, other: Action) -> bool {
        let shared = |a: Option<usize>, b: Option<usize>| a.is_some() && a == b;
        self.resumes()
            || other.resumes()
            || shared(self.nodes_touched(), other.nodes_touched())
            || shared(self.clients_touched(), other.clients_touched())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_on_different_targets_commute_and_resumes_depend_on_everything() {
        assert!(!Action::Cut(0, 3).depends_on(Action::Crash(2)));
        assert!(Action::Cut(0, 2).depends_on(Action::Crash(2)));
        assert!(Action::Cut(1, 0).depends_on(Action::PauseClient(1)));
        assert!(Action::Restart(2).depends_on(Action::Crash(2)));
        assert!(Action::ResumeClient(0).depends_on(Action::Jump(4)));
        assert!(
            Action::Crash(0) < Action::Restart(0),
            "a restart may follow its crash"
        );
    }
}
