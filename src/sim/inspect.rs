//! A window on the simulated world at every history event, for tests that hold the world
//! against its history: that a node is down exactly while a crash of it is active, a
//! process paused exactly while a pause on it is, a clock's rate what its active rate
//! faults compose to.
//!
//! [`run_inspected`] runs a scenario like [`super::run`] and calls the inspector right
//! after each event is recorded, with the world as that event leaves it. A run without
//! an inspector pays one untaken branch per event.

use super::clock::Clock;
use super::node::{Node, Status};
use crate::history::Event;
use crate::lifecycle::RunOutput;
use crate::scenario::Scenario;

/// The world right after an event was recorded.
pub struct Inspect<'w> {
    pub(super) event: &'w Event,
    pub(super) nodes: &'w [Node],
    pub(super) node_paused: &'w [bool],
    pub(super) client_paused: &'w [bool],
    pub(super) client_clocks: &'w [Clock],
}

impl Inspect<'_> {
    /// The event just recorded.
    pub fn event(&self) -> &Event {
        self.event
    }

    pub fn node_up(&self, node: usize) -> bool {
        self.nodes[node].status() == Status::Up
    }

    /// Whether the node's requests are held back (a pause).
    pub fn node_paused(&self, node: usize) -> bool {
        self.node_paused[node]
    }

    /// Whether the client's events are held back (a pause).
    pub fn client_paused(&self, client: usize) -> bool {
        self.client_paused[client]
    }

    /// The rate the node's clock runs at, in ppm above true time.
    pub fn node_rate_ppm(&self, node: usize) -> i64 {
        self.nodes[node].clock.rate_ppm()
    }

    /// The rate the client's clock runs at, in ppm above true time.
    pub fn client_rate_ppm(&self, client: usize) -> i64 {
        self.client_clocks[client].rate_ppm()
    }
}

/// Runs `scenario` with `seed`, showing the world to `inspect` at every history event.
pub fn run_inspected(scenario: &Scenario, seed: u64, inspect: &mut dyn FnMut(&Inspect<'_>)) -> RunOutput {
    let mut history = Vec::new();
    let mut output = super::run_world(scenario, seed, &mut history, &mut |_, _| {}, Some(inspect));
    output.history = history;
    output
}
