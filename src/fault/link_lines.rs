//! Which messages a link fault acted on get a `link` line: the first of each client
//! operation on each link and direction. A client cut off from a node retries into the
//! cut many times an operation; one line per operation, link and direction is the
//! evidence that the fault touched that operation (the checker counts operations, not
//! retries), and keeps a long partition from tripling the history. Shared by both
//! drivers, which call [`LinkLines::operation`] at every `invoke` of a client.

use crate::history::{LinkAction, LinkDir};

/// One client operation's links that already have a line of each kind.
#[derive(Debug)]
pub struct LinkLines {
    nodes: usize,
    /// Per client: its operation's number (one more at each invoke).
    epoch: Vec<u64>,
    /// Per (client, node, direction, dropped or delayed): the operation it was written for
    /// last, plus one (0: never).
    written: Vec<u64>,
}

impl LinkLines {
    pub fn new(clients: usize, nodes: usize) -> Self {
        LinkLines {
            nodes,
            epoch: vec![0; clients],
            written: vec![0; clients * nodes * 4],
        }
    }

    /// Client `client` starts an operation.
    pub fn operation(&mut self, client: usize) {
        if let Some(e) = self.epoch.get_mut(client) {
            *e += 1;
        }
    }

    /// Whether a message of `client` to or from `node` that a fault `action`ed gets its
    /// line: the first of the operation in progress, per direction and per kind (a drop,
    /// a delay). Holds, releases and drops after a hold (the real proxy's) always do:
    /// one chunk is held at a time per link, and its end says how long.
    pub fn first(&mut self, client: usize, node: usize, dir: LinkDir, action: LinkAction) -> bool {
        let kind = match action {
            LinkAction::Dropped => 0,
            LinkAction::Delayed => 1,
            LinkAction::Held | LinkAction::Released => return true,
        };
        let Some(&epoch) = self.epoch.get(client) else {
            return true;
        };
        let i = ((client * self.nodes + node) * 2 + (dir == LinkDir::ToClient) as usize) * 2 + kind;
        match self.written.get_mut(i) {
            Some(w) if *w == epoch + 1 => false,
            Some(w) => {
                *w = epoch + 1;
                true
            }
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_operation_link_direction_and_kind() {
        let mut l = LinkLines::new(2, 3);
        l.operation(0);
        assert!(l.first(0, 1, LinkDir::ToNode, LinkAction::Dropped));
        assert!(!l.first(0, 1, LinkDir::ToNode, LinkAction::Dropped), "a retry");
        assert!(
            l.first(0, 1, LinkDir::ToClient, LinkAction::Dropped),
            "the other way"
        );
        assert!(
            l.first(0, 2, LinkDir::ToNode, LinkAction::Dropped),
            "another node"
        );
        assert!(
            l.first(0, 1, LinkDir::ToNode, LinkAction::Delayed),
            "another kind"
        );
        assert!(
            l.first(1, 1, LinkDir::ToNode, LinkAction::Dropped),
            "another client"
        );
        assert!(l.first(0, 1, LinkDir::ToNode, LinkAction::Held));
        assert!(l.first(0, 1, LinkDir::ToNode, LinkAction::Held), "holds always");
        l.operation(0);
        assert!(
            l.first(0, 1, LinkDir::ToNode, LinkAction::Dropped),
            "the next operation"
        );
    }
}
