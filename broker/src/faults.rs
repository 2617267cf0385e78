//! Injected faults: a testing aid in the manner of librdkafka's mock cluster.
//!
//! `--fault COMMAND:ACTION:TIMES[:ERROR]` (repeatable; `faults = [...]` in the
//! TOML file) makes the broker fail a command on purpose, so that the client
//! paths a healthy standalone broker never takes (routing redirects, backoff
//! on availability errors, deduplicated retries after an unknown outcome) can
//! be exercised against the real broker. Nothing is injected unless
//! configured.
//!
//! * `COMMAND`: a command name as HELP lists it (`PUBLISH`, `LIST`, ...);
//! * `ACTION`: `error` answers with `ERROR` without executing the command;
//!   `error-after` executes it, then answers with `ERROR` instead of its
//!   reply; `drop-after` executes it, then closes the connection without a
//!   reply (the client cannot know whether it was applied); `delay` waits
//!   before executing it and `delay-after` after executing it (a slow path,
//!   e.g. to reach the request timeout before or after the command took
//!   effect);
//! * `TIMES`: how many matching requests are affected, or `*` for all;
//! * `ERROR`: the error in the broker's text form without `ERROR:`, e.g.
//!   `NOT_LEADER leader=10.0.0.5:9000` (class and retryable come from the
//!   registry unless given); required for `error` and `error-after`. For
//!   `delay` and `delay-after` the fourth part is the delay in milliseconds.

use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use cursus_wire::{Command, ErrorPayload};

/// What an injected fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultAction {
    /// Answer with the error; the command is not executed.
    Error,
    /// Execute the command, then answer with the error.
    ErrorAfter,
    /// Execute the command, then close the connection without answering.
    DropAfter,
    /// Wait this many milliseconds, then execute the command.
    Delay(u64),
    /// Execute the command, then wait this many milliseconds before
    /// answering.
    DelayAfter(u64),
}

/// One configured fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    /// The command it applies to.
    pub command: Command,
    /// What it does.
    pub action: FaultAction,
    /// How many requests it affects; `None` = every one.
    pub times: Option<u64>,
    /// The error answered (absent for `drop-after`).
    pub error: Option<ErrorPayload>,
}

impl FromStr for FaultRule {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, String> {
        let mut parts = spec.splitn(4, ':');
        let (command, action, times) = match (parts.next(), parts.next(), parts.next()) {
            (Some(c), Some(a), Some(t)) => (c, a, t),
            _ => {
                return Err(format!(
                    "fault {spec:?} is not COMMAND:ACTION:TIMES[:ERROR]"
                ))
            }
        };
        let command = Command::from_name(command)
            .ok_or_else(|| format!("fault {spec:?}: unknown command {command:?}"))?;
        let action = match action {
            "error" => FaultAction::Error,
            "error-after" => FaultAction::ErrorAfter,
            "drop-after" => FaultAction::DropAfter,
            "delay" => FaultAction::Delay(0),
            "delay-after" => FaultAction::DelayAfter(0),
            other => {
                return Err(format!(
                    "fault {spec:?}: action {other:?} is not error, error-after, drop-after, \
                     delay or delay-after"
                ))
            }
        };
        let times = match times {
            "*" => None,
            n => Some(n.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(|| {
                format!("fault {spec:?}: times {n:?} is not a positive number or *")
            })?),
        };
        if let FaultAction::Delay(_) | FaultAction::DelayAfter(_) = action {
            let ms = parts
                .next()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .ok_or_else(|| format!("fault {spec:?}: a delay needs its milliseconds"))?;
            let action = match action {
                FaultAction::Delay(_) => FaultAction::Delay(ms),
                _ => FaultAction::DelayAfter(ms),
            };
            return Ok(FaultRule {
                command,
                action,
                times,
                error: None,
            });
        }
        let error = match parts.next().map(str::trim).filter(|t| !t.is_empty()) {
            Some(text) => Some(
                ErrorPayload::from_error_text(&format!("ERROR: {text}"))
                    .ok_or_else(|| format!("fault {spec:?}: {text:?} is not an error"))?,
            ),
            None if action == FaultAction::DropAfter => None,
            None => return Err(format!("fault {spec:?}: action {action:?} needs an ERROR")),
        };
        Ok(FaultRule {
            command,
            action,
            times,
            error,
        })
    }
}

/// The configured faults and how many uses each has left.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<(FaultRule, AtomicU64)>,
}

impl Faults {
    /// Faults from the configuration.
    pub fn new(rules: &[FaultRule]) -> Faults {
        Faults {
            rules: rules
                .iter()
                .map(|r| (r.clone(), AtomicU64::new(r.times.unwrap_or(u64::MAX))))
                .collect(),
        }
    }

    /// True when a fault is configured for `command` (used up or not): its
    /// requests then go one by one through [`take`](Self::take).
    pub fn configured(&self, command: Command) -> bool {
        self.rules.iter().any(|(rule, _)| rule.command == command)
    }

    /// The fault to apply to one request for `command`, if any; counts the use.
    pub fn take(&self, command: Command) -> Option<&FaultRule> {
        self.rules.iter().find_map(|(rule, left)| {
            if rule.command != command {
                return None;
            }
            let used = left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                    if n == u64::MAX {
                        Some(n) // unlimited
                    } else {
                        n.checked_sub(1)
                    }
                })
                .is_ok();
            used.then_some(rule)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_action_and_counts_uses() {
        let rule: FaultRule = "PUBLISH:error-after:2:replication_unavailable reason=test"
            .parse()
            .unwrap();
        assert_eq!(rule.command, Command::Publish);
        assert_eq!(rule.action, FaultAction::ErrorAfter);
        let e = rule.error.clone().unwrap();
        assert_eq!(e.code, "replication_unavailable");
        assert!(e.retryable);
        let drop: FaultRule = "LIST:drop-after:*".parse().unwrap();
        assert_eq!(
            (drop.action, drop.times, drop.error),
            (FaultAction::DropAfter, None, None)
        );

        let faults = Faults::new(&[rule, "LIST:error:*:NOT_LEADER".parse().unwrap()]);
        let delay: FaultRule = "PUBLISH:delay-after:1:250".parse().unwrap();
        assert_eq!(
            (delay.action, delay.error),
            (FaultAction::DelayAfter(250), None)
        );
        assert!("PUBLISH:delay:1".parse::<FaultRule>().is_err());
        assert!(faults.take(Command::Publish).is_some());
        assert!(faults.take(Command::Publish).is_some());
        assert!(faults.take(Command::Publish).is_none(), "only twice");
        assert!(faults.take(Command::Consume).is_none());
        for _ in 0..100 {
            assert!(faults.take(Command::List).is_some(), "unlimited");
        }
    }

    #[test]
    fn rejects_malformed_specs() {
        for bad in [
            "PUBLISH",
            "PUBLISH:error",
            "NOPE:error:1:x",
            "PUBLISH:explode:1:x",
            "PUBLISH:error:0:x",
            "PUBLISH:error:-1:x",
            "PUBLISH:error:1",
            "PUBLISH:error-after:*:",
        ] {
            assert!(bad.parse::<FaultRule>().is_err(), "{bad} accepted");
        }
    }
}
