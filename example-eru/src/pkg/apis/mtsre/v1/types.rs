use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ListMeta, ObjectMeta, Time};
use serde::{Deserialize, Serialize};

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:shortName=eru
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=DEPLOYMENT,type=string,JSONPath=`.spec.deployment`
// +kubebuilder:printcolumn:name=SCHEDULE,type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name=LAST,type=date,JSONPath=`.status.lastScheduleTime`,description=`When the last slot was rolled out`
// +kubebuilder:printcolumn:name=NEXT,type=string,JSONPath=`.status.nextScheduleTime`,description=`The next slot`
// +kubebuilder:printcolumn:name=SUSPENDED,type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name=ROLLOUTS,type=integer,JSONPath=`.status.rollouts`,priority=1
// +kubebuilder:printcolumn:name=READY,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`,priority=1
// +kubebuilder:printcolumn:name=AGE,type=date,JSONPath=`.metadata.creationTimestamp`

/// An `Eru` (elegant rolling update) rolls the pods of a Deployment of its namespace on a cron
/// schedule, as `kubectl rollout restart` does: at each slot the operator sets the pod-template
/// annotation `mtsre.meitu.com/restartedAt` to the slot's time, and the Deployment replaces its
/// pods gracefully, following its own rollout strategy.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Eru {
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// The desired schedule.
    pub spec: EruSpec,
    /// What the operator observed and did, written through the status subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<EruStatus>,
}

/// The desired state of an [`Eru`].
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EruSpec {
    /// The name of the Deployment to roll, in the Eru's own namespace.
    // +kubebuilder:validation:MinLength=1
    // +kubebuilder:validation:MaxLength=253
    // +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
    pub deployment: String,
    /// When to roll: a cron expression of 5 fields (minute hour day-of-month month day-of-week),
    /// or 6 with seconds first, or one of `@yearly`, `@annually`, `@monthly`, `@weekly`,
    /// `@daily`, `@midnight`, `@hourly`. Evaluated in `timeZone`.
    // +kubebuilder:validation:MinLength=1
    // +kubebuilder:validation:MaxLength=256
    // +kubebuilder:validation:XValidation:rule="self.matches('^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^ \\t]+([ \\t]+[^ \\t]+){4,5})$')",message="must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), 6 with seconds first, or @yearly, @monthly, @weekly, @daily or @hourly"
    pub schedule: String,
    /// The IANA time zone the schedule is evaluated in (for example `Asia/Shanghai`), as
    /// CronJob's `timeZone`; UTC when unset. The operator checks that the zone exists.
    // +kubebuilder:validation:MinLength=1
    // +kubebuilder:validation:MaxLength=64
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Stops the rollouts while true; slots that pass meanwhile are not made up for (except the
    /// most recent one, within `startingDeadlineSeconds`, once resumed).
    // +kubebuilder:default=false
    #[serde(default)]
    pub suspend: bool,
    /// How late, in seconds, a slot may still be rolled out when the operator missed it (it was
    /// down, or the Eru was suspended). CronJob's rule: only the most recent missed slot is rolled,
    /// and only if it is not older than this; older slots are recorded as missed. Unset: no limit.
    // +kubebuilder:validation:Minimum=0
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
}

/// The observed state of an [`Eru`].
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EruStatus {
    /// The last slot that was rolled out (the value of the pod-template annotation
    /// `mtsre.meitu.com/restartedAt`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
    /// The next slot, when one is scheduled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_schedule_time: Option<Time>,
    /// When the operator patched the Deployment for the last slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_rollout_time: Option<Time>,
    /// The last slot that was missed: passed by more than `startingDeadlineSeconds` before the
    /// operator could roll it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_missed_time: Option<Time>,
    /// How many slots were rolled out.
    #[serde(default)]
    pub rollouts: i64,
    /// The `metadata.generation` the operator last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The `Ready` condition: `True` while slots are being rolled; `False` with the reason
    /// (`InvalidSchedule`, `UnknownTimeZone`, `InvalidDeployment`, `DeploymentNotFound`,
    /// `Suspended`) otherwise.
    // +listType=map
    // +listMapKey=type
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

/// A list of [`Eru`] objects.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EruList {
    /// Standard list metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The objects.
    pub items: Vec<Eru>,
}
