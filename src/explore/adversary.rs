//! The adversary's moves: a fault starting or ending at a tick boundary, applied to the
//! explored [`World`] as the simulator applies the same fault (`sim/faults.rs`), and
//! recorded as a `fault` event when a replay keeps the history. Each fault starts with
//! the next id; its end names the same id. The adversary never hits a target twice at
//! once (see `action.rs`), so every fault here is the only one of its kind on its target.

use super::action::Action;
use super::scope::Scope;
use super::world::{Since, World};
use crate::fault::{CutDirection, Fault, Origin};
use crate::history::{Event, FaultAction, FaultEvent};

impl World {
    fn fault_event(&mut self, id: usize, action: FaultAction, fault: Fault) {
        if let Some(log) = &mut self.log {
            log.push(Event::Fault(FaultEvent {
                t_us: self.now_us,
                id,
                action,
                origin: Origin::Script,
                fault,
            }));
        }
    }

    fn start(&mut self, fault: Fault) -> Since {
        let since = Since {
            tick: self.tick,
            id: self.next_fault,
        };
        self.next_fault += 1;
        self.fault_event(since.id, FaultAction::Start, fault);
        since
    }

    fn end(&mut self, since: Option<Since>, fault: Fault) {
        let id = since.expect("only started faults end").id;
        self.fault_event(id, FaultAction::End, fault);
    }

    /// Applies a fault at the current boundary.
    pub fn apply(&mut self, scope: &Scope, action: Action, power_loss: bool) {
        let t = self.now_us;
        let (node, client) = (action.node(), action.client());
        let cut = |n: usize, c: usize| Fault::Partition {
            nodes: vec![n],
            clients: vec![c],
            direction: CutDirection::Both,
        };
        let pause = Fault::Pause {
            node: (!action.is_client_pause()).then_some(node),
            client: action.is_client_pause().then_some(client),
            point: None,
        };
        match action {
            Action::Tick => unreachable!("a tick is run, not applied"),
            Action::Crash(_) => {
                self.left.crashes -= 1;
                self.nodes[node].crash(t, power_loss);
                self.crashed[node] = Some(self.start(Fault::Crash { node, power_loss }));
            }
            Action::Restart(_) => {
                self.nodes[node].restart(t);
                let since = self.crashed[node].take();
                self.end(since, Fault::Crash { node, power_loss });
            }
            Action::Failover(_) => {
                self.left.failovers -= 1;
                self.nodes[node].fail_master(t);
                self.failed[node] = Some(self.start(Fault::Failover { node }));
            }
            Action::Promote(_) => {
                self.nodes[node].promote_replica(t);
                let since = self.failed[node].take();
                self.end(since, Fault::Failover { node });
            }
            Action::Cut(..) => {
                self.left.partitions -= 1;
                let l = self.link(scope, client, node);
                self.cut[l] = Some(self.start(cut(node, client)));
            }
            Action::Heal(..) => {
                let l = self.link(scope, client, node);
                let since = self.cut[l].take();
                self.end(since, cut(node, client));
            }
            Action::Jump(_) => {
                self.left.clock_jumps -= 1;
                self.nodes[node].clock.jump(scope.jump_by_us);
                let fault = Fault::ClockJump {
                    node: Some(node),
                    client: None,
                    by_us: scope.jump_by_us,
                };
                let since = self.start(fault.clone());
                self.end(Some(since), fault);
            }
            Action::PauseNode(_) => {
                self.left.pauses -= 1;
                self.node_paused[node] = Some(self.start(pause));
            }
            Action::PauseClient(_) => {
                self.left.pauses -= 1;
                self.peers[client].paused = Some(self.start(pause));
            }
            Action::ResumeNode(_) => {
                let since = self.node_paused[node].take();
                self.end(since, pause);
                for ev in std::mem::take(&mut self.node_deferred[node]) {
                    self.step(scope, t, ev);
                }
            }
            Action::ResumeClient(_) => {
                let since = self.peers[client].paused.take();
                self.end(since, pause);
                for ev in std::mem::take(&mut self.peers[client].deferred) {
                    self.step(scope, t, ev);
                }
            }
        }
        self.last = Some(action);
    }
}
