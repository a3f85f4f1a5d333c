//! CronJobs (`batch/v1`): `SetDefaults_CronJob` with the pod defaults of its job template, the
//! initial status, and `ValidateCronJobCreate`/`ValidateCronJobUpdate`. No CronJob controller
//! runs, so no Jobs are started.
//!
//! kube-apiserver parses the schedule with `robfig/cron`'s standard parser. Here the number of
//! fields and the descriptors (`@hourly`, `@every 1h`, …) are checked as it checks them, with
//! its messages, and each field by the `croner` crate, whose messages differ from Go's.

use std::str::FromStr;

use croner::parser::{CronParser, Seconds};
use serde_json::{Value, json};

use crate::error::{FieldError, go_quote};
use crate::storage::object::{self, ensure_object};

use super::pod::{default_pod_spec, pod_spec_errors};
use super::set_default;
use super::workload::{NONNEGATIVE, restart_policy_errors};

/// The defaults of a CronJob and of its job template's pod spec. (The templates' metadata,
/// which Go always writes as `{}` when empty, is written at storage with every other struct
/// field that is not a pointer: [`crate::semantics::fields::stored_as_go`].)
pub(super) fn cronjob_defaults(obj: &mut Value) {
    if let Some(pod) = obj.pointer_mut("/spec/jobTemplate/spec/template/spec") {
        default_pod_spec(pod);
    }
    let spec = ensure_object(
        ensure_object(obj)
            .entry("spec")
            .or_insert_with(|| json!({})),
    );
    set_default(spec, "concurrencyPolicy", json!("Allow"));
    set_default(spec, "suspend", json!(false));
    set_default(spec, "successfulJobsHistoryLimit", json!(3));
    set_default(spec, "failedJobsHistoryLimit", json!(1));
}

/// `ValidateCronJobCreate` (with `old`, the update's `validateCronJobSpec`), in Go's order.
pub(super) fn cronjob_errors(obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let old_spec = old.and_then(|o| o.get("spec"));
    let mut errs = Vec::new();
    let schedule = spec
        .get("schedule")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let time_zone = spec.get("timeZone").filter(|t| !t.is_null());
    if !schedule.is_empty() {
        let tz_allowed = old_spec
            .and_then(|s| s.get("schedule"))
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("TZ"));
        if let Err(msg) = parse_schedule(schedule) {
            errs.push(FieldError::invalid_str("spec.schedule", schedule, msg));
        }
        if tz_allowed && schedule.contains("TZ") && time_zone.is_some() {
            errs.push(FieldError::invalid_str(
                "spec.schedule",
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !tz_allowed && schedule.contains("TZ") {
            errs.push(FieldError::invalid_str(
                "spec.schedule",
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    if let Some(n) = spec.get("startingDeadlineSeconds").and_then(Value::as_i64)
        && n < 0
    {
        errs.push(FieldError::invalid(
            "spec.startingDeadlineSeconds",
            n.to_string(),
            NONNEGATIVE,
        ));
    }
    if old_spec.and_then(|s| s.get("timeZone")) != time_zone
        && let Some(tz) = time_zone
    {
        errs.extend(time_zone_errors(tz.as_str().unwrap_or_default()));
    }
    const POLICIES: &[&str] = &["Allow", "Forbid", "Replace"];
    match spec
        .get("concurrencyPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "" => errs.push(FieldError::required("spec.concurrencyPolicy", "")),
        p if !POLICIES.contains(&p) => {
            errs.push(FieldError::not_supported(
                "spec.concurrencyPolicy",
                p,
                POLICIES,
            ));
        }
        _ => {}
    }
    let template = "spec.jobTemplate.spec.template.spec";
    errs.extend(pod_spec_errors(
        obj.pointer("/spec/jobTemplate/spec/template/spec"),
        template,
    ));
    errs.extend(restart_policy_errors(
        obj.pointer("/spec/jobTemplate/spec/template/spec/restartPolicy"),
        &format!("{template}.restartPolicy"),
    ));
    if let Some(sel) = obj
        .pointer("/spec/jobTemplate/spec/selector")
        .filter(|s| !s.is_null())
    {
        errs.push(FieldError::invalid(
            "spec.jobTemplate.spec.selector",
            sel.to_string(),
            "`selector` will be auto-generated",
        ));
    }
    for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        if let Some(n) = spec.get(key).and_then(Value::as_i64)
            && n < 0
        {
            errs.push(FieldError::invalid(
                format!("spec.{key}"),
                n.to_string(),
                NONNEGATIVE,
            ));
        }
    }
    // The controller appends an 11-character suffix to the name of each Job it starts.
    let name = object::name(obj);
    if old.is_none() && name.len() > 52 {
        errs.push(FieldError::invalid_str(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    // Declarative validation reports a missing schedule, after the rest.
    if schedule.is_empty() {
        errs.push(FieldError::required("spec.schedule", ""));
    }
    errs
}

/// `robfig/cron`'s standard parser: an optional `TZ=`/`CRON_TZ=` prefix, then a descriptor or
/// five fields.
fn parse_schedule(schedule: &str) -> Result<(), String> {
    let mut spec = schedule.trim();
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let (tz, rest) = spec.split_once(' ').unwrap_or((spec, ""));
        let name = tz.split_once('=').map_or("", |(_, n)| n);
        if jiff::tz::TimeZone::get(name).is_err() {
            return Err(format!(
                "provided bad location {name}: unknown time zone {name}"
            ));
        }
        spec = rest.trim();
    }
    if let Some(descriptor) = spec.strip_prefix('@') {
        return match descriptor {
            "yearly" | "annually" | "monthly" | "weekly" | "daily" | "midnight" | "hourly" => {
                Ok(())
            }
            d if d.starts_with("every ") => {
                let every = d.trim_start_matches("every ").trim();
                jiff::SignedDuration::from_str(every)
                    .map(|_| ())
                    .map_err(|_| {
                        format!(
                            "failed to parse duration {spec}: time: invalid duration {}",
                            go_quote(every)
                        )
                    })
            }
            _ => Err(format!("unrecognized descriptor: {spec}")),
        };
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .build()
        .parse(&fields.join(" "))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// `validateTimeZone`: the name's characters, not `Local`, and a zone the database knows.
fn time_zone_errors(tz: &str) -> Vec<FieldError> {
    const FIELD: &str = "spec.timeZone";
    let shown = go_quote(tz);
    if tz.is_empty() {
        return vec![FieldError::invalid(
            FIELD,
            shown,
            "timeZone must be nil or non-empty string",
        )];
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'))
    };
    let unknown = || FieldError::invalid(FIELD, go_quote(tz), format!("unknown time zone {tz}"));
    if !tz.split('/').all(part_ok) {
        return vec![unknown()];
    }
    let mut errs = Vec::new();
    if tz.eq_ignore_ascii_case("Local") {
        errs.push(FieldError::invalid(
            FIELD,
            shown,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    // Go's `time.LoadLocation` answers "Local" with the server's own zone.
    if tz != "Local" && jiff::tz::TimeZone::get(tz).is_err() {
        errs.push(unknown());
    }
    errs
}
