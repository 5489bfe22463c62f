//! [`Conversations`]: the conversations of the last responses by response id, so that a
//! request continuing one with `previous_response_id` is read whole (serve-fake answers
//! it; the recording proxy records the whole conversation as the model call's input), and
//! for serve-fake the response objects themselves, which `GET /v1/responses/{id}` returns.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use gauntlet_core::trace::{Message, Role};
use serde_json::Value;

/// Most responses remembered; the oldest is forgotten first.
const REMEMBERED: usize = 4096;

/// The conversations of the last responses (the system prompt left out: the API does not
/// carry `instructions` over to the next response), by response id.
#[derive(Debug, Default)]
pub struct Conversations {
    by_id: HashMap<String, Kept>,
    order: VecDeque<String>,
}

/// One remembered response: its conversation, and the response object when it was kept.
#[derive(Debug)]
struct Kept {
    messages: Arc<Vec<Message>>,
    object: Option<Arc<Value>>,
}

impl Conversations {
    /// The conversation that ended with response `id`, its reply included.
    pub fn get(&self, id: &str) -> Option<Arc<Vec<Message>>> {
        self.by_id.get(id).map(|k| Arc::clone(&k.messages))
    }

    /// The response object of `id`, when it was kept with [`Conversations::keep_object`].
    pub fn object(&self, id: &str) -> Option<Arc<Value>> {
        self.by_id.get(id).and_then(|k| k.object.clone())
    }

    /// Keeps the response object of a remembered response `id`.
    pub fn keep_object(&mut self, id: &str, object: Value) {
        if let Some(k) = self.by_id.get_mut(id) {
            k.object = Some(Arc::new(object));
        }
    }

    /// Forgets response `id` (a deleted response); whether it was remembered.
    pub fn forget(&mut self, id: &str) -> bool {
        self.order.retain(|o| o != id);
        self.by_id.remove(id).is_some()
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
        let kept = Kept {
            messages: Arc::new(kept),
            object: None,
        };
        self.by_id.insert(id.to_owned(), kept);
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
