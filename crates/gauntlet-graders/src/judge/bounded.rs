//! [`bounded`]: runs futures with at most a given number in flight and returns their outputs
//! in input order. Calibration asks a judge hundreds of questions; this keeps the library
//! free of a runtime (any executor drives it) while a slow judge still overlaps its calls.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use gauntlet_core::target::BoxFuture;

/// Runs `futs` with at most `limit` (at least 1) in flight; outputs in input order.
pub fn bounded<'a, T: Send + 'a>(
    futs: Vec<BoxFuture<'a, T>>,
    limit: usize,
) -> impl Future<Output = Vec<T>> + Send + 'a {
    let n = futs.len();
    Bounded {
        waiting: futs.into_iter().enumerate().rev().collect(),
        running: Vec::new(),
        done: (0..n).map(|_| None).collect(),
        limit: limit.max(1),
    }
}

struct Bounded<'a, T> {
    /// Not started yet, last first (so `pop` takes them in order).
    waiting: Vec<(usize, BoxFuture<'a, T>)>,
    running: Vec<(usize, BoxFuture<'a, T>)>,
    done: Vec<Option<T>>,
    limit: usize,
}

impl<T> Unpin for Bounded<'_, T> {}

impl<T> Future for Bounded<'_, T> {
    type Output = Vec<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<T>> {
        let this = self.get_mut();
        loop {
            while this.running.len() < this.limit {
                match this.waiting.pop() {
                    Some(f) => this.running.push(f),
                    None => break,
                }
            }
            let before = this.running.len();
            let mut i = 0;
            while i < this.running.len() {
                match this.running[i].1.as_mut().poll(cx) {
                    Poll::Ready(v) => {
                        let (idx, _) = this.running.swap_remove(i);
                        this.done[idx] = Some(v);
                    }
                    Poll::Pending => i += 1,
                }
            }
            if this.running.is_empty() && this.waiting.is_empty() {
                let out = this
                    .done
                    .iter_mut()
                    .map(|d| d.take().expect("every future finished"));
                return Poll::Ready(out.collect());
            }
            // Finished ones made room: start more now rather than wait for a wake-up.
            if this.running.len() == before || this.waiting.is_empty() {
                return Poll::Pending;
            }
        }
    }
}
