//! ERU's defaulting webhook: an Eru created or updated without `spec.timeZone` gets the
//! operator's `--default-time-zone` — a setting of the running operator, which a schema's
//! `default` (fixed when the CRD is installed) cannot hold.
//!
//! What kube-apiserver needs to call it is in `deploy/webhook.yaml` (the
//! MutatingWebhookConfiguration of the marker on [`register`], its Service and certificate).

use jiff::tz::TimeZone;
use kube_controller_runtime::Manager;
use kube_controller_runtime::webhook::admission::{Defaulter, Denial, Request};
use kube_controller_runtime::webhook::{Webhook, WebhookError};

use crate::pkg::apis::mtsre::v1::Eru;
use crate::schedule::ScheduleError;

// +kubebuilder:webhook:path=/mutate-mtsre-meitu-com-v1-eru,mutating=true,failurePolicy=fail,sideEffects=None,groups=mtsre.meitu.com,resources=erus,verbs=create;update,versions=v1,name=meru.mtsre.meitu.com,admissionReviewVersions=v1

/// Registers the defaulter on `mgr`'s webhook server, at `/mutate-mtsre-meitu-com-v1-eru`.
pub fn register(mgr: &Manager, zone: DefaultTimeZone) -> Result<(), WebhookError> {
    Webhook::builder(mgr)
        .for_::<Eru>()
        .with_defaulter(zone)
        .complete()
}

/// Sets `spec.timeZone` of an Eru that has none to a zone of the IANA database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultTimeZone(String);

impl DefaultTimeZone {
    /// The zone called `name` (`Asia/Shanghai`, `UTC`); an error if the database has none.
    pub fn new(name: &str) -> Result<Self, ScheduleError> {
        TimeZone::get(name).map_err(|e| ScheduleError::UnknownTimeZone {
            zone: name.to_string(),
            reason: e.to_string(),
        })?;
        Ok(DefaultTimeZone(name.to_string()))
    }

    /// The zone's name.
    pub fn name(&self) -> &str {
        &self.0
    }
}

impl Defaulter<Eru> for DefaultTimeZone {
    async fn default(&self, _req: &Request, eru: &mut Eru) -> Result<(), Denial> {
        eru.spec.time_zone.get_or_insert_with(|| self.0.clone());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_zones_of_the_database_are_defaults() {
        assert_eq!(
            DefaultTimeZone::new("Asia/Shanghai")
                .ok()
                .map(|z| z.name().to_string()),
            Some("Asia/Shanghai".to_string())
        );
        let err = DefaultTimeZone::new("Mars/Olympus")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.starts_with("unknown time zone \"Mars/Olympus\""),
            "{err}"
        );
    }
}
