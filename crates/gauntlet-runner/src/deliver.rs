//! Delivery: [`Delivery`], the one way events reach reporters, for a live run, a re-grade and
//! a stored run replayed by `gauntlet report` alike.
//!
//! Reporters run on their own thread behind a bounded channel of batches: one wake-up per
//! batch instead of per event (which matters at tens of thousands of trials per second), and
//! back-pressure instead of memory when a disk is slow. While the channel is full, events
//! are held here and keep gathering, up to [`BATCH_MAX`]; only then does the sender wait, so a
//! hiccup of the reporter thread (a commit, an fsync) never stalls every trial. Reporters
//! flush (the store commits) at most [`FLUSH_EVERY`] after the first event they have not
//! flushed, and whenever the stream pauses that long. A reporter that fails is not called
//! again; its first error is returned at the end.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use gauntlet_core::event::{Reporter, RunEvent};

/// How long reporters may hold events before flushing (the store: before committing). A
/// finished trial is durable at most this long after it finished, unless the reporters are
/// behind (a slow disk): then it waits with the sender, which offers it again this often.
pub const FLUSH_EVERY: Duration = Duration::from_millis(25);

/// Batches of events the reporter thread's channel holds. One: with the batch the thread is
/// working on and the one gathering here, up to three batches of finished cases are in
/// memory while the reporters are behind; with four, a 50,000-case run whose reporters were
/// behind held up to six, about 2 MB more at its peak for no throughput the benchmark shows.
const CHANNEL_BATCHES: usize = 1;

/// Events gathered before a batch must be handed over (waiting if need be).
pub const BATCH_MAX: usize = 256;

/// Hands events to reporters on their own thread.
pub struct Delivery {
    tx: Option<SyncSender<Vec<RunEvent>>>,
    writer: Option<JoinHandle<Vec<String>>>,
    held: Vec<RunEvent>,
}

impl Delivery {
    /// Starts the reporter thread.
    pub fn start(reporters: Vec<Box<dyn Reporter>>) -> Delivery {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<RunEvent>>(CHANNEL_BATCHES);
        let writer = std::thread::Builder::new()
            .name("gauntlet-report".into())
            .spawn(move || report_loop(reporters, &rx))
            .expect("spawn the reporter thread");
        Delivery {
            tx: Some(tx),
            writer: Some(writer),
            held: Vec::with_capacity(BATCH_MAX),
        }
    }

    /// Adds an event; a full batch is handed over at once (waiting for room if need be), so
    /// memory stays bounded however fast events come.
    pub fn push(&mut self, ev: RunEvent) {
        self.held.push(ev);
        if self.held.len() >= BATCH_MAX {
            self.offer(false);
        }
    }

    /// Hands the held events to the reporter thread; returns whether nothing is left held.
    /// While the reporters are busy a batch smaller than [`BATCH_MAX`] stays here and keeps
    /// growing instead of stopping the sender; `wait` (and a full batch) blocks instead.
    pub fn offer(&mut self, wait: bool) -> bool {
        if self.held.is_empty() {
            return true;
        }
        let Some(tx) = &self.tx else {
            return true;
        };
        let events = std::mem::replace(&mut self.held, Vec::with_capacity(BATCH_MAX));
        // The writer thread only stops when the channel closes, so a send cannot fail unless
        // it panicked; its panic surfaces at `finish`.
        match tx.try_send(events) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => true,
            Err(TrySendError::Full(events)) if wait || events.len() >= BATCH_MAX => {
                let _ = tx.send(events);
                true
            }
            Err(TrySendError::Full(events)) => {
                self.held = events;
                false
            }
        }
    }

    /// Delivers everything held, waits for the reporters to flush and returns their errors.
    pub fn finish(mut self) -> Vec<String> {
        self.offer(true);
        drop(self.tx.take());
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(errors)) => errors,
            Some(Err(_)) => vec!["a reporter panicked".into()],
            None => Vec::new(),
        }
    }
}

/// Delivers a finished stream (a stored run replayed) to reporters and returns their errors.
pub fn deliver_all(
    events: impl IntoIterator<Item = RunEvent>,
    reporters: Vec<Box<dyn Reporter>>,
) -> Vec<String> {
    let mut d = Delivery::start(reporters);
    for ev in events {
        d.push(ev);
    }
    d.finish()
}

/// The reporter thread: calls every reporter with each event in order, flushes them at most
/// every [`FLUSH_EVERY`] and at the end, and collects each failing reporter's first error.
fn report_loop(mut reporters: Vec<Box<dyn Reporter>>, rx: &Receiver<Vec<RunEvent>>) -> Vec<String> {
    let mut failed = vec![false; reporters.len()];
    let mut errors = Vec::new();
    let mut flush_errors = Vec::new();
    let mut flush_all = |reporters: &mut Vec<Box<dyn Reporter>>, failed: &mut Vec<bool>| {
        for (i, r) in reporters.iter_mut().enumerate() {
            if !failed[i]
                && let Err(e) = r.flush()
            {
                failed[i] = true;
                flush_errors.push(e.to_string());
            }
        }
    };
    // Reporters flush (the store commits) at most every FLUSH_EVERY and whenever the stream
    // pauses that long: one commit per batch cost a fifth of the CPU at full speed, and a
    // finished trial is still durable within FLUSH_EVERY.
    let mut pending = false;
    let mut last_flush = Instant::now();
    loop {
        let wait = if pending {
            FLUSH_EVERY.saturating_sub(last_flush.elapsed())
        } else {
            Duration::from_secs(3600)
        };
        match rx.recv_timeout(wait) {
            Ok(batch) => {
                for ev in &batch {
                    for (i, r) in reporters.iter_mut().enumerate() {
                        if failed[i] {
                            continue;
                        }
                        if let Err(e) = r.on_event(ev) {
                            failed[i] = true;
                            errors.push(e.to_string());
                        }
                    }
                }
                if !pending {
                    pending = true;
                    last_flush = Instant::now();
                }
                if last_flush.elapsed() >= FLUSH_EVERY {
                    flush_all(&mut reporters, &mut failed);
                    pending = false;
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if pending {
                    flush_all(&mut reporters, &mut failed);
                    pending = false;
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                if pending {
                    flush_all(&mut reporters, &mut failed);
                }
                break;
            }
        }
    }
    errors.extend(flush_errors);
    errors
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use gauntlet_core::event::{EventKind, ReportError};

    use super::*;

    /// Records warnings it sees; fails on the message "boom".
    struct Seen(Arc<Mutex<Vec<String>>>);

    impl Reporter for Seen {
        fn on_event(&mut self, ev: &RunEvent) -> Result<(), ReportError> {
            if let EventKind::Warning { message } = &ev.kind {
                if message == "boom" {
                    return Err("the disk is full".into());
                }
                self.0.lock().expect("lock").push(message.clone());
            }
            Ok(())
        }
    }

    fn warning(i: usize) -> RunEvent {
        RunEvent::new(
            0,
            EventKind::Warning {
                message: format!("w{i}"),
            },
        )
    }

    #[test]
    fn every_event_arrives_in_order_and_a_failed_reporter_stops_with_its_error() {
        let a = Arc::new(Mutex::new(Vec::new()));
        let b = Arc::new(Mutex::new(Vec::new()));
        let mut events: Vec<RunEvent> = (0..1000).map(warning).collect();
        events.insert(
            500,
            RunEvent::new(
                0,
                EventKind::Warning {
                    message: "boom".into(),
                },
            ),
        );
        let errors = deliver_all(
            events,
            vec![
                Box::new(Seen(Arc::clone(&a))),
                Box::new(Seen(Arc::clone(&b))),
            ],
        );
        // Both reporters failed on the same event: one error each, and nothing after it.
        assert_eq!(errors, vec!["the disk is full", "the disk is full"]);
        let a = a.lock().expect("lock");
        assert_eq!(a.len(), 500);
        assert!(a.iter().enumerate().all(|(i, m)| *m == format!("w{i}")));
    }
}
