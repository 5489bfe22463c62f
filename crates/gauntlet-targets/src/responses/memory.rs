//! [`Conversations`]: the conversations of the last responses by response id, so that a
//! request continuing one with `previous_response_id` is read whole (serve-fake answers
//! it; the recording proxy records the whole conversation as the model call's input).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use gauntlet_core::trace::{Message, Role};

/// Most responses remembered; the oldest is forgotten first.
const REMEMBERED: usize = 4096;

/// The conversations of the last responses (the system prompt left out: the API does not
/// carry `instructions` over to the next response), by response id.
#[derive(Debug, Default)]
pub struct Conversations {
    by_id: HashMap<String, Arc<Vec<Message>>>,
    order: VecDeque<String>,
}

impl Conversations {
    /// The conversation that ended with response `id`, its reply included.
    pub fn get(&self, id: &str) -> Option<Arc<Vec<Message>>> {
        self.by_id.get(id).cloned()
    }

    /// Remembers `messages` (system messages dropped) and `reply` as response `id`'s.
    pub fn keep(&mut self, id: &str, messages: &[Message], reply: &Message) {
        if self.by_id.contains_key(id) {
            return;
        }
        if self.order.len() >= REMEMBERED
            && let Some(old) = self.order.pop_front()
        {
            self.by_id.remove(&old);
        }
        let mut kept: Vec<Message> = messages
            .iter()
            .filter(|m| m.role != Role::System)
            .cloned()
            .collect();
        kept.push(reply.clone());
        self.order.push_back(id.to_owned());
        self.by_id.insert(id.to_owned(), Arc::new(kept));
    }

    /// `messages` with the conversation of `previous` put in after their system messages;
    /// `None` when `previous` is not remembered.
    pub fn continued(&self, previous: &str, mut messages: Vec<Message>) -> Option<Vec<Message>> {
        let before = self.get(previous)?;
        let at = messages
            .iter()
            .take_while(|m| m.role == Role::System)
            .count();
        messages.splice(at..at, before.iter().cloned());
        Some(messages)
    }
}
