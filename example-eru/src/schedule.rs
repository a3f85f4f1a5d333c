//! The schedule logic, pure: which slot is due at a given instant, which one comes next, and
//! what to do about slots the operator missed. Every function takes `now` as an argument, so
//! tests drive a controlled clock; nothing here reads the system clock or talks to an API.
//!
//! Cron expressions are parsed and evaluated by [`croner`] (5 fields, or 6 with seconds first,
//! and `@hourly`-style nicknames), in an IANA time zone from [`jiff`]'s bundled database. Over
//! daylight-saving changes croner follows the Open Cron Pattern Specification (as Vixie cron):
//! a fixed-time slot that falls into a skipped hour runs at the first instant after the gap,
//! a fixed-time slot in a repeated hour runs once (on its first pass), and wildcard or stepped
//! slots run at each wall-clock match that exists (none in the gap, twice in the repeat).
//!
//! Missed slots follow CronJob's rule: only the most recent slot since the last one recorded
//! is considered — never a burst — and it is rolled out if it is not older than
//! `startingDeadlineSeconds`, otherwise it is recorded as missed.

use std::str::FromStr as _;

use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp, Zoned};

/// How many missed slots are counted before the count is reported as "more than" this.
pub const MISSED_COUNT_LIMIT: u32 = 100;

/// Why a schedule cannot be used. Neither is retryable: the spec must change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// `spec.schedule` is not a cron expression this operator accepts, or matches no time.
    #[error("invalid schedule {schedule:?}: {reason}")]
    InvalidSchedule {
        /// The expression as written.
        schedule: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `spec.timeZone` names no zone of the IANA time zone database.
    #[error("unknown time zone {zone:?}: {reason}")]
    UnknownTimeZone {
        /// The name as written.
        zone: String,
        /// The lookup's error.
        reason: String,
    },
}

impl ScheduleError {
    /// The condition reason and Event reason for this error (`InvalidSchedule`,
    /// `UnknownTimeZone`).
    pub fn reason(&self) -> &'static str {
        match self {
            ScheduleError::InvalidSchedule { .. } => "InvalidSchedule",
            ScheduleError::UnknownTimeZone { .. } => "UnknownTimeZone",
        }
    }
}

/// A parsed cron expression bound to a time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    zone: TimeZone,
    expression: String,
}

impl Schedule {
    /// Parses `expression` (5 fields, 6 with seconds first, or a nickname such as `@hourly`)
    /// for evaluation in `time_zone` (an IANA name; UTC when `None`).
    ///
    /// ```
    /// use example_eru::schedule::Schedule;
    /// let s = Schedule::parse("0 3 * * *", Some("Asia/Shanghai")).unwrap();
    /// let after: jiff::Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    /// assert_eq!(s.next_after(after).unwrap().to_string(), "2026-01-01T19:00:00Z");
    /// assert!(Schedule::parse("* * *", None).is_err());
    /// ```
    pub fn parse(expression: &str, time_zone: Option<&str>) -> Result<Schedule, ScheduleError> {
        let zone = match time_zone {
            None => TimeZone::UTC,
            Some(name) => TimeZone::get(name).map_err(|e| ScheduleError::UnknownTimeZone {
                zone: name.to_string(),
                reason: e.to_string(),
            })?,
        };
        let invalid = |reason: String| ScheduleError::InvalidSchedule {
            schedule: expression.to_string(),
            reason,
        };
        let trimmed = expression.trim();
        if trimmed.starts_with("TZ=") || trimmed.starts_with("CRON_TZ=") {
            return Err(invalid(
                "a time zone in the schedule is not supported: use spec.timeZone".into(),
            ));
        }
        let parser = CronParser::builder()
            .seconds(Seconds::Optional)
            .year(Year::Disallowed)
            .build();
        let cron = parser
            .parse(trimmed)
            .map_err(|e| invalid(name_the_field(&parser, trimmed, e)))?;
        let schedule = Schedule {
            cron,
            zone,
            expression: expression.to_string(),
        };
        // "0 0 30 2 *" parses but never matches: find out now rather than at every wake-up.
        let probe = Timestamp::UNIX_EPOCH;
        if schedule.next_after(probe).is_none() {
            return Err(invalid("it matches no time".into()));
        }
        Ok(schedule)
    }

    /// The expression as written.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The time zone the expression is evaluated in.
    pub fn time_zone(&self) -> &TimeZone {
        &self.zone
    }

    fn zoned(&self, t: Timestamp) -> Zoned {
        t.to_zoned(self.zone.clone())
    }

    /// The first slot strictly after `t`; `None` when there is none (before year 5000).
    pub fn next_after(&self, t: Timestamp) -> Option<Timestamp> {
        // Slots are whole seconds: start from the second `t` is in.
        let start = self.zoned(floor_second(t));
        self.cron
            .find_next_occurrence(&start, false)
            .ok()
            .map(|z| z.timestamp())
    }

    /// The last slot at or before `t`; `None` when there is none.
    pub fn latest_at_or_before(&self, t: Timestamp) -> Option<Timestamp> {
        let start = self.zoned(floor_second(t));
        self.cron
            .find_previous_occurrence(&start, true)
            .ok()
            .map(|z| z.timestamp())
    }

    /// The slots strictly after `after` and at or before `until`, at most `limit` of them.
    pub fn slots_between(
        &self,
        after: Timestamp,
        until: Timestamp,
        limit: usize,
    ) -> Vec<Timestamp> {
        let mut out = Vec::new();
        let mut cursor = after;
        while out.len() < limit {
            match self.next_after(cursor) {
                Some(t) if t <= until => {
                    out.push(t);
                    cursor = t;
                }
                _ => break,
            }
        }
        out
    }
}

/// croner's error for `expression`, prefixed with the field it is about when one field alone is
/// the problem (found by parsing each field with the others as `*`).
fn name_the_field(parser: &CronParser, expression: &str, e: croner::errors::CronError) -> String {
    const FIVE: [&str; 5] = ["minute", "hour", "day-of-month", "month", "day-of-week"];
    const SIX: [&str; 6] = [
        "second",
        "minute",
        "hour",
        "day-of-month",
        "month",
        "day-of-week",
    ];
    let fields: Vec<&str> = expression.split_whitespace().collect();
    let names: &[&str] = match fields.len() {
        5 => &FIVE,
        6 => &SIX,
        _ => return e.to_string(),
    };
    for (i, field) in fields.iter().enumerate() {
        let alone: Vec<&str> = (0..fields.len())
            .map(|j| if j == i { *field } else { "*" })
            .collect();
        if parser.parse(&alone.join(" ")).is_err() {
            return format!("{} field {field:?}: {e}", names[i]);
        }
    }
    e.to_string()
}

/// Drops the sub-second part of `t` (towards the past).
pub fn floor_second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// What the controller knows about an Eru when it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotState {
    /// The Eru's `metadata.creationTimestamp`: no slot before it counts.
    pub created: Timestamp,
    /// `status.lastScheduleTime`: the last slot rolled out.
    pub last_schedule_time: Option<Timestamp>,
    /// `status.lastMissedTime`: the last slot recorded as missed (so a miss is reported once).
    pub last_missed_time: Option<Timestamp>,
    /// `spec.startingDeadlineSeconds`.
    pub starting_deadline_seconds: Option<i64>,
    /// `spec.suspend`.
    pub suspend: bool,
}

impl SlotState {
    /// The instant after which slots are still unhandled: the latest of the creation time, the
    /// last slot rolled out and the last slot recorded as missed.
    pub fn earliest(&self) -> Timestamp {
        [self.last_schedule_time, self.last_missed_time]
            .into_iter()
            .flatten()
            .fold(self.created, Timestamp::max)
    }
}

/// What to do now, and when to look again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// `spec.suspend` is set: nothing is rolled and no wake-up is scheduled (a change of the Eru
    /// wakes the controller).
    Suspended,
    /// Roll out `slot` now.
    Run {
        /// The slot to roll out (the most recent unhandled one).
        slot: Timestamp,
        /// Older unhandled slots that are skipped because a newer one is rolled instead, capped
        /// at [`MISSED_COUNT_LIMIT`].
        skipped: u32,
        /// The next slot after now, to wake up at.
        next: Option<Timestamp>,
    },
    /// The most recent unhandled slot passed more than `startingDeadlineSeconds` ago: record it
    /// as missed, roll nothing.
    Missed {
        /// The slot that was missed.
        slot: Timestamp,
        /// How long ago it was.
        late_by: SignedDuration,
        /// The next slot after now, to wake up at.
        next: Option<Timestamp>,
    },
    /// Nothing is due; wake up at `next`.
    Wait {
        /// The next slot after now.
        next: Option<Timestamp>,
    },
}

impl Decision {
    /// The instant to wake up at, if any.
    pub fn next(&self) -> Option<Timestamp> {
        match self {
            Decision::Suspended => None,
            Decision::Run { next, .. }
            | Decision::Missed { next, .. }
            | Decision::Wait { next } => *next,
        }
    }
}

/// Decides what to do at `now` for an Eru in `state` with `schedule`.
///
/// The most recent slot at or before `now` and after [`SlotState::earliest`] is the only
/// candidate. It runs if `startingDeadlineSeconds` is unset or it is at most that old
/// (`slot + deadline >= now`); otherwise it is [`Decision::Missed`]. Older unhandled slots are
/// never run (no burst after an outage); they are only counted.
///
/// ```
/// use example_eru::schedule::{Decision, Schedule, SlotState, decide};
/// let every_minute = Schedule::parse("* * * * *", None).unwrap();
/// let t = |s: &str| s.parse::<jiff::Timestamp>().unwrap();
/// let state = SlotState {
///     created: t("2026-01-01T00:00:30Z"),
///     last_schedule_time: None,
///     last_missed_time: None,
///     starting_deadline_seconds: None,
///     suspend: false,
/// };
/// let d = decide(&every_minute, &state, t("2026-01-01T00:03:10Z"));
/// assert_eq!(
///     d,
///     Decision::Run { slot: t("2026-01-01T00:03:00Z"), skipped: 2, next: Some(t("2026-01-01T00:04:00Z")) }
/// );
/// ```
pub fn decide(schedule: &Schedule, state: &SlotState, now: Timestamp) -> Decision {
    if state.suspend {
        return Decision::Suspended;
    }
    let next = schedule.next_after(now);
    let earliest = state.earliest();
    let Some(slot) = schedule
        .latest_at_or_before(now)
        .filter(|slot| *slot > earliest)
    else {
        return Decision::Wait { next };
    };
    let late_by = now.duration_since(slot);
    if let Some(deadline) = state.starting_deadline_seconds
        && late_by > SignedDuration::from_secs(deadline.max(0))
    {
        return Decision::Missed {
            slot,
            late_by,
            next,
        };
    }
    let limit = MISSED_COUNT_LIMIT as usize + 1;
    let unhandled = schedule.slots_between(earliest, slot, limit);
    // `unhandled` ends with `slot` itself unless the count hit the limit first.
    let skipped = u32::try_from(unhandled.len().saturating_sub(1)).unwrap_or(MISSED_COUNT_LIMIT);
    Decision::Run {
        slot,
        skipped: skipped.min(MISSED_COUNT_LIMIT),
        next,
    }
}

/// How long to sleep from `now` until `next` (zero when it has passed), rounded up to the
/// millisecond so that a wake-up is never early because of rounding.
pub fn wait_until(now: Timestamp, next: Timestamp) -> std::time::Duration {
    let d = next.duration_since(now);
    if d <= SignedDuration::ZERO {
        return std::time::Duration::ZERO;
    }
    let nanos = d.as_nanos();
    let millis = nanos.div_euclid(1_000_000) + i128::from(nanos.rem_euclid(1_000_000) != 0);
    std::time::Duration::from_millis(u64::try_from(millis).unwrap_or(u64::MAX))
}

/// The slot time as written into the pod-template annotation: RFC 3339 in UTC, whole seconds
/// (`2026-03-29T01:00:00Z`).
pub fn format_slot(slot: Timestamp) -> String {
    floor_second(slot)
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// Reads an annotation value written by [`format_slot`] (any RFC 3339 timestamp is accepted).
pub fn parse_slot(value: &str) -> Option<Timestamp> {
    Timestamp::from_str(value.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn state(created: &str) -> SlotState {
        SlotState {
            created: t(created),
            last_schedule_time: None,
            last_missed_time: None,
            starting_deadline_seconds: None,
            suspend: false,
        }
    }

    #[test]
    fn parsing_accepts_five_and_six_fields_and_nicknames_and_rejects_the_rest() {
        struct Case {
            expr: &'static str,
            zone: Option<&'static str>,
            ok: bool,
            error_has: &'static str,
        }
        let cases = [
            Case {
                expr: "*/5 * * * *",
                zone: None,
                ok: true,
                error_has: "",
            },
            Case {
                expr: "*/10 * * * * *",
                zone: None,
                ok: true,
                error_has: "",
            },
            Case {
                expr: "0 3 * * MON-FRI",
                zone: Some("Europe/Berlin"),
                ok: true,
                error_has: "",
            },
            Case {
                expr: "@hourly",
                zone: None,
                ok: true,
                error_has: "",
            },
            Case {
                expr: "@daily",
                zone: Some("Asia/Shanghai"),
                ok: true,
                error_has: "",
            },
            Case {
                expr: "  0 0 * * *  ",
                zone: None,
                ok: true,
                error_has: "",
            },
            Case {
                expr: "* * *",
                zone: None,
                ok: false,
                error_has: "5 or 6 fields",
            },
            Case {
                expr: "",
                zone: None,
                ok: false,
                error_has: "empty",
            },
            Case {
                expr: "0 0 0 1 1 * 2030",
                zone: None,
                ok: false,
                error_has: "5 or 6 fields",
            },
            Case {
                expr: "61 * * * *",
                zone: None,
                ok: false,
                error_has: "invalid schedule",
            },
            Case {
                expr: "* 24 * * *",
                zone: None,
                ok: false,
                error_has: "invalid schedule",
            },
            Case {
                expr: "hello world a b c",
                zone: None,
                ok: false,
                error_has: "invalid schedule",
            },
            Case {
                expr: "@every 5m",
                zone: None,
                ok: false,
                error_has: "invalid schedule",
            },
            Case {
                expr: "0 0 30 2 *",
                zone: None,
                ok: false,
                error_has: "matches no time",
            },
            Case {
                expr: "TZ=UTC 0 0 * * *",
                zone: None,
                ok: false,
                error_has: "spec.timeZone",
            },
            Case {
                expr: "0 0 * * *",
                zone: Some("Mars/Olympus_Mons"),
                ok: false,
                error_has: "unknown time zone \"Mars/Olympus_Mons\"",
            },
            Case {
                expr: "0 0 * * *",
                zone: Some("utc+8"),
                ok: false,
                error_has: "unknown time zone",
            },
        ];
        for c in cases {
            let got = Schedule::parse(c.expr, c.zone);
            match (c.ok, got) {
                (true, Ok(s)) => assert_eq!(s.expression(), c.expr),
                (false, Err(e)) => {
                    let msg = e.to_string();
                    assert!(
                        msg.to_lowercase().contains(&c.error_has.to_lowercase()),
                        "{:?}: {msg:?} lacks {:?}",
                        c.expr,
                        c.error_has
                    );
                    let want = if c.error_has.contains("time zone") {
                        "UnknownTimeZone"
                    } else {
                        "InvalidSchedule"
                    };
                    assert_eq!(e.reason(), want, "{:?}", c.expr);
                }
                (ok, got) => panic!(
                    "{:?} in {:?}: expected ok={ok}, got {got:?}",
                    c.expr, c.zone
                ),
            }
        }
    }

    #[test]
    fn slots_in_utc_and_in_a_zone() {
        struct Case {
            expr: &'static str,
            zone: Option<&'static str>,
            after: &'static str,
            next: &'static str,
        }
        let cases = [
            Case {
                expr: "* * * * * *",
                zone: None,
                after: "2026-05-01T10:00:00Z",
                next: "2026-05-01T10:00:01Z",
            },
            // a sub-second instant: the next whole second
            Case {
                expr: "* * * * * *",
                zone: None,
                after: "2026-05-01T10:00:00.999Z",
                next: "2026-05-01T10:00:01Z",
            },
            Case {
                expr: "*/15 * * * *",
                zone: None,
                after: "2026-05-01T10:07:00Z",
                next: "2026-05-01T10:15:00Z",
            },
            Case {
                expr: "30 2 * * *",
                zone: None,
                after: "2026-05-01T10:07:00Z",
                next: "2026-05-02T02:30:00Z",
            },
            // 03:00 in Shanghai (UTC+8, no DST) is 19:00 UTC the day before
            Case {
                expr: "0 3 * * *",
                zone: Some("Asia/Shanghai"),
                after: "2026-05-01T10:00:00Z",
                next: "2026-05-01T19:00:00Z",
            },
            // New York in summer is UTC-4
            Case {
                expr: "0 9 * * MON",
                zone: Some("America/New_York"),
                after: "2026-07-01T00:00:00Z",
                next: "2026-07-06T13:00:00Z",
            },
            Case {
                expr: "@monthly",
                zone: None,
                after: "2026-05-15T00:00:00Z",
                next: "2026-06-01T00:00:00Z",
            },
            // day-of-month OR day-of-week, as Vixie cron and CronJob
            Case {
                expr: "0 0 13 * FRI",
                zone: None,
                after: "2026-05-01T00:00:00Z",
                next: "2026-05-08T00:00:00Z",
            },
        ];
        for c in cases {
            let s = Schedule::parse(c.expr, c.zone).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                s.next_after(t(c.after)),
                Some(t(c.next)),
                "{} after {}",
                c.expr,
                c.after
            );
            assert_eq!(
                s.latest_at_or_before(t(c.next)),
                Some(t(c.next)),
                "{}: a slot is its own latest",
                c.expr
            );
        }
    }

    /// Europe/Berlin: 2026-03-29 02:00 CET jumps to 03:00 CEST (01:00 UTC); 2026-10-25 03:00 CEST
    /// falls back to 02:00 CET (01:00 UTC), so 02:00–02:59 happens twice.
    #[test]
    fn daylight_saving_changes() {
        struct Case {
            name: &'static str,
            expr: &'static str,
            from: &'static str,
            until: &'static str,
            want: &'static [&'static str],
        }
        let cases = [
            Case {
                name: "a fixed time in the skipped hour runs once, right after the gap",
                expr: "30 2 * * *",
                from: "2026-03-28T12:00:00Z",
                until: "2026-03-30T12:00:00Z",
                // 28th: 02:30 CET = 01:30 UTC is before `from`; 29th: 03:00 CEST = 01:00 UTC; 30th: 02:30 CEST = 00:30 UTC
                want: &["2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"],
            },
            Case {
                name: "wildcard hours skip the gap",
                expr: "0 * * * *",
                from: "2026-03-28T23:30:00Z",
                until: "2026-03-29T02:30:00Z",
                // 00:00 CET (23:00Z) is before; 01:00 CET = 00:00Z, then 03:00 CEST = 01:00Z, 04:00 CEST = 02:00Z
                want: &[
                    "2026-03-29T00:00:00Z",
                    "2026-03-29T01:00:00Z",
                    "2026-03-29T02:00:00Z",
                ],
            },
            Case {
                name: "a fixed time in the repeated hour runs once",
                expr: "30 2 * * *",
                from: "2026-10-24T12:00:00Z",
                until: "2026-10-26T12:00:00Z",
                // 25th: 02:30 CEST = 00:30 UTC (the second 02:30 CET = 01:30 UTC is not a slot); 26th: 02:30 CET = 01:30 UTC
                want: &["2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"],
            },
            Case {
                name: "wildcard hours run in both passes of the repeated hour",
                expr: "0 * * * *",
                from: "2026-10-24T23:30:00Z",
                until: "2026-10-25T02:30:00Z",
                // 02:00 CEST = 00:00Z, 02:00 CET = 01:00Z, 03:00 CET = 02:00Z
                want: &[
                    "2026-10-25T00:00:00Z",
                    "2026-10-25T01:00:00Z",
                    "2026-10-25T02:00:00Z",
                ],
            },
        ];
        for c in cases {
            let s =
                Schedule::parse(c.expr, Some("Europe/Berlin")).unwrap_or_else(|e| panic!("{e}"));
            let got: Vec<String> = s
                .slots_between(t(c.from), t(c.until), 10)
                .into_iter()
                .map(|x| x.to_string())
                .collect();
            assert_eq!(got, c.want, "{}", c.name);
            // Backwards agrees with forwards: each slot is the latest at or before itself, and
            // the latest before a slot is the previous one.
            for pair in c.want.windows(2) {
                let before = t(pair[1])
                    .checked_sub(SignedDuration::from_secs(1))
                    .unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(
                    s.latest_at_or_before(before),
                    Some(t(pair[0])),
                    "{}: before {}",
                    c.name,
                    pair[1]
                );
            }
        }
    }

    #[test]
    fn decisions() {
        struct Case {
            name: &'static str,
            expr: &'static str,
            state: SlotState,
            now: &'static str,
            want: Decision,
        }
        let base = state("2026-01-01T00:00:30Z");
        let cases = [
            Case {
                name: "nothing due before the first slot",
                expr: "* * * * *",
                state: base,
                now: "2026-01-01T00:00:45Z",
                want: Decision::Wait {
                    next: Some(t("2026-01-01T00:01:00Z")),
                },
            },
            Case {
                name: "the first slot after creation runs",
                expr: "* * * * *",
                state: base,
                now: "2026-01-01T00:01:00.2Z",
                want: Decision::Run {
                    slot: t("2026-01-01T00:01:00Z"),
                    skipped: 0,
                    next: Some(t("2026-01-01T00:02:00Z")),
                },
            },
            Case {
                name: "a slot exactly at now runs",
                expr: "* * * * *",
                state: base,
                now: "2026-01-01T00:01:00Z",
                want: Decision::Run {
                    slot: t("2026-01-01T00:01:00Z"),
                    skipped: 0,
                    next: Some(t("2026-01-01T00:02:00Z")),
                },
            },
            Case {
                name: "a slot recorded is not run again",
                expr: "* * * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-01-01T00:01:00Z")),
                    ..base
                },
                now: "2026-01-01T00:01:30Z",
                want: Decision::Wait {
                    next: Some(t("2026-01-01T00:02:00Z")),
                },
            },
            Case {
                name: "no slot at creation time itself (CronJob counts from after it)",
                expr: "* * * * * *",
                state: state("2026-01-01T00:00:30Z"),
                now: "2026-01-01T00:00:30.5Z",
                want: Decision::Wait {
                    next: Some(t("2026-01-01T00:00:31Z")),
                },
            },
            Case {
                name: "after an outage only the most recent slot runs (no burst), without deadline",
                expr: "* * * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-01-01T00:01:00Z")),
                    ..base
                },
                now: "2026-01-01T00:05:10Z",
                want: Decision::Run {
                    slot: t("2026-01-01T00:05:00Z"),
                    skipped: 3,
                    next: Some(t("2026-01-01T00:06:00Z")),
                },
            },
            Case {
                name: "within the deadline the most recent missed slot runs",
                expr: "* * * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-01-01T00:01:00Z")),
                    starting_deadline_seconds: Some(30),
                    ..base
                },
                now: "2026-01-01T00:05:30Z",
                want: Decision::Run {
                    slot: t("2026-01-01T00:05:00Z"),
                    skipped: 3,
                    next: Some(t("2026-01-01T00:06:00Z")),
                },
            },
            Case {
                name: "past the deadline it is recorded as missed",
                expr: "*/10 * * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-01-01T00:00:00Z")),
                    starting_deadline_seconds: Some(60),
                    ..base
                },
                now: "2026-01-01T00:21:01Z",
                want: Decision::Missed {
                    slot: t("2026-01-01T00:20:00Z"),
                    late_by: SignedDuration::from_secs(61),
                    next: Some(t("2026-01-01T00:30:00Z")),
                },
            },
            Case {
                name: "a miss is reported once",
                expr: "*/10 * * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-01-01T00:00:00Z")),
                    last_missed_time: Some(t("2026-01-01T00:20:00Z")),
                    starting_deadline_seconds: Some(60),
                    ..base
                },
                now: "2026-01-01T00:25:00Z",
                want: Decision::Wait {
                    next: Some(t("2026-01-01T00:30:00Z")),
                },
            },
            Case {
                name: "a deadline of zero still runs a slot on time",
                expr: "* * * * * *",
                state: SlotState {
                    starting_deadline_seconds: Some(0),
                    ..base
                },
                now: "2026-01-01T00:00:40Z",
                want: Decision::Run {
                    slot: t("2026-01-01T00:00:40Z"),
                    skipped: 9,
                    next: Some(t("2026-01-01T00:00:41Z")),
                },
            },
            Case {
                name: "suspended: nothing, no wake-up",
                expr: "* * * * * *",
                state: SlotState {
                    suspend: true,
                    ..base
                },
                now: "2026-01-01T00:09:00Z",
                want: Decision::Suspended,
            },
            Case {
                name: "resumed after a long suspension, within the deadline: the most recent slot runs once",
                expr: "0 * * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-01-01T01:00:00Z")),
                    starting_deadline_seconds: Some(3600),
                    ..base
                },
                now: "2026-01-03T07:30:00Z",
                want: Decision::Run {
                    slot: t("2026-01-03T07:00:00Z"),
                    skipped: 53,
                    next: Some(t("2026-01-03T08:00:00Z")),
                },
            },
            Case {
                name: "the count of skipped slots is capped",
                expr: "* * * * * *",
                state: base,
                now: "2026-01-02T00:00:00Z",
                want: Decision::Run {
                    slot: t("2026-01-02T00:00:00Z"),
                    skipped: MISSED_COUNT_LIMIT,
                    next: Some(t("2026-01-02T00:00:01Z")),
                },
            },
            Case {
                name: "DST gap: the 02:30 slot of the spring-forward day is due at 03:00 CEST",
                expr: "30 2 * * *",
                state: SlotState {
                    last_schedule_time: Some(t("2026-03-28T01:30:00Z")),
                    ..base
                },
                now: "2026-03-29T01:00:05Z",
                want: Decision::Run {
                    slot: t("2026-03-29T01:00:00Z"),
                    skipped: 0,
                    next: Some(t("2026-03-30T00:30:00Z")),
                },
            },
        ];
        for c in cases {
            let zone = c.name.starts_with("DST").then_some("Europe/Berlin");
            let s = Schedule::parse(c.expr, zone).unwrap_or_else(|e| panic!("{e}"));
            let got = decide(&s, &c.state, t(c.now));
            assert_eq!(got, c.want, "{}", c.name);
        }
    }

    #[test]
    fn a_controlled_clock_rolls_each_slot_once() {
        // Tick a clock through two minutes at uneven steps, recording slots as the controller
        // does: every second slot is run exactly once, in order.
        let s = Schedule::parse("*/2 * * * * *", None).unwrap_or_else(|e| panic!("{e}"));
        let mut st = state("2026-01-01T00:00:00.4Z");
        let mut now = t("2026-01-01T00:00:00.4Z");
        let mut ran = Vec::new();
        let steps = [300, 700, 1_100, 250, 2_000, 900, 1_500];
        for i in 0..200 {
            now = now
                .checked_add(SignedDuration::from_millis(steps[i % steps.len()]))
                .unwrap_or_else(|e| panic!("{e}"));
            if let Decision::Run { slot, next, .. } = decide(&s, &st, now) {
                ran.push(slot);
                st.last_schedule_time = Some(slot);
                assert!(next.is_some_and(|n| n > now));
            }
        }
        assert!(ran.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
        assert!(ran.iter().all(|x| x.as_second() % 2 == 0));
        assert!(ran.len() > 50, "{}", ran.len());
    }

    #[test]
    fn waits_round_up_and_slots_round_trip() {
        let now = t("2026-01-01T00:00:00.0004Z");
        assert_eq!(
            wait_until(now, t("2026-01-01T00:00:01Z")),
            std::time::Duration::from_millis(1000)
        );
        assert_eq!(
            wait_until(now, t("2026-01-01T00:00:00Z")),
            std::time::Duration::ZERO
        );
        assert_eq!(
            format_slot(t("2026-03-29T01:00:00.7Z")),
            "2026-03-29T01:00:00Z"
        );
        assert_eq!(
            parse_slot("2026-03-29T03:00:00+02:00"),
            Some(t("2026-03-29T01:00:00Z"))
        );
        assert_eq!(parse_slot("yesterday"), None);
    }
}
