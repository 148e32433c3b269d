//! What the threads measured, added up per phase and printed: a text line
//! per phase, or one JSON object for the whole run.

use super::options::{BenchArgs, Phase};
use anyhow::{bail, Result};
use hdrhistogram::Histogram;
use std::time::Instant;

/// What one thread measured in one phase.
pub(super) struct ThreadResult {
    pub(super) hist: Histogram<u64>,
    pub(super) records: u64,
    pub(super) requests: u64,
    pub(super) hits: u64,
    pub(super) errors: u64,
    pub(super) first_error: Option<String>,
    pub(super) end: Instant,
}

pub(super) fn new_hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

/// A phase's totals over every thread.
pub(super) struct PhaseSummary {
    phase: Phase,
    records: u64,
    requests: u64,
    hits: u64,
    errors: u64,
    first_error: Option<String>,
    seconds: f64,
    hist: Histogram<u64>,
}

impl PhaseSummary {
    /// Adds up the threads' results of a phase that began at `t0`; it ended
    /// with the last thread, or at `fallback_end` when no thread said. A
    /// thread's failure is the phase's.
    pub(super) fn total(
        phase: Phase,
        results: Vec<Result<ThreadResult>>,
        t0: Instant,
        fallback_end: Instant,
    ) -> Result<PhaseSummary> {
        let mut sum = PhaseSummary {
            phase,
            records: 0,
            requests: 0,
            hits: 0,
            errors: 0,
            first_error: None,
            seconds: 0.0,
            hist: new_hist(),
        };
        let mut end = t0;
        let mut failure = None;
        for r in results {
            match r {
                Ok(r) => {
                    sum.records += r.records;
                    sum.requests += r.requests;
                    sum.hits += r.hits;
                    sum.errors += r.errors;
                    if sum.first_error.is_none() {
                        sum.first_error = r.first_error;
                    }
                    let _ = sum.hist.add(&r.hist);
                    end = end.max(r.end);
                }
                Err(e) => failure = Some(e),
            }
        }
        if let Some(e) = failure {
            return Err(e.context(format!("{} phase failed", sum.label())));
        }
        if end <= t0 {
            end = fallback_end;
        }
        sum.seconds = (end - t0).as_secs_f64();
        Ok(sum)
    }

    fn label(&self) -> &'static str {
        self.phase.label()
    }

    fn qps(&self) -> f64 {
        self.records as f64 / self.seconds.max(1e-9)
    }

    fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds.max(1e-9)
    }

    fn json(&self) -> serde_json::Value {
        let h = &self.hist;
        serde_json::json!({
            "phase": self.label(),
            "records": self.records,
            "requests": self.requests,
            "hits": self.hits,
            "misses": if self.phase == Phase::Get { self.records.saturating_sub(self.hits) } else { 0 },
            "errors": self.errors,
            "first_error": self.first_error,
            "seconds": self.seconds,
            "records_per_sec": self.qps(),
            "requests_per_sec": self.rps(),
            "latency_us": {
                "p50": h.value_at_quantile(0.50),
                "p99": h.value_at_quantile(0.99),
                "p999": h.value_at_quantile(0.999),
                "max": h.max(),
                "mean": h.mean(),
            },
        })
    }

    pub(super) fn print(&self, multi: usize) {
        let h = &self.hist;
        let what = match self.phase {
            Phase::Set => "Setting",
            Phase::Get => "Getting",
        };
        let hits = match self.phase {
            Phase::Get => format!(
                " hits={} misses={}",
                self.hits,
                self.records.saturating_sub(self.hits)
            ),
            Phase::Set => String::new(),
        };
        println!(
            "{what} done: elapsed_time={:.6} num_records={} qps={:.0} requests={} rps={:.0}{hits} errors={}",
            self.seconds,
            self.records,
            self.qps(),
            self.requests,
            self.rps(),
            self.errors
        );
        println!(
            "  latency_us (per request of {multi} records): p50={} p99={} p99.9={} max={} mean={:.1}",
            h.value_at_quantile(0.50),
            h.value_at_quantile(0.99),
            h.value_at_quantile(0.999),
            h.max(),
            h.mean()
        );
    }
}

/// The first line of the text output: what is measured.
pub(super) fn print_header(a: &BenchArgs, addr: &str, multi: usize) {
    println!(
        "Bench: address={addr} protocol={} threads={} connections={} iter={} multi={multi} size={} random_key={}",
        a.protocol.name(),
        a.threads,
        a.connections.max(1),
        a.iter,
        a.size,
        a.random_key
    );
}

/// Ends the run: the JSON object when asked for, and a failure when any
/// request failed (the first one's reason in it).
pub(super) fn finish(
    a: &BenchArgs,
    addr: &str,
    multi: usize,
    summaries: &[PhaseSummary],
) -> Result<()> {
    if a.json {
        let j = serde_json::json!({
            "address": addr,
            "protocol": a.protocol.name(),
            "threads": a.threads,
            "connections": a.connections.max(1),
            "iter": a.iter,
            "multi": multi,
            "size": a.size,
            "random_key": a.random_key,
            "phases": summaries.iter().map(PhaseSummary::json).collect::<Vec<_>>(),
        });
        println!("{j}");
    }
    let errors: u64 = summaries.iter().map(|s| s.errors).sum();
    if errors > 0 {
        let first = summaries
            .iter()
            .find_map(|s| s.first_error.clone())
            .unwrap_or_default();
        bail!("{errors} request(s) failed; the first: {first}");
    }
    Ok(())
}
