//! The schemas of k8s-openapi's types a CRD's fields use (`ObjectMeta`, `Time`, `Quantity`,
//! `IntOrString`, `Condition`, `LabelSelector`): facts from k8s.io/apimachinery's types and
//! controller-gen's output, which the walk uses instead of following those types.

use serde_json::Number;

use super::schema::Schema;
use crate::model::types::K8S_META_V1;

/// The `pattern` of a `resource.Quantity` string.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

fn quantity() -> Schema {
    Schema {
        pattern: Some(QUANTITY_PATTERN.to_string()),
        ..Schema::int_or_string()
    }
}

fn object(props: Vec<(&str, Schema)>, required: &[&str]) -> Schema {
    Schema {
        properties: props.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        required: required.iter().map(|s| s.to_string()).collect(),
        ..Schema::typed("object")
    }
}

fn condition() -> Schema {
    let mut s = object(
        vec![
            (
                "lastTransitionTime",
                Schema::formatted("string", "date-time").with_description(
                    "lastTransitionTime is the last time the condition transitioned from one status to another.",
                ),
            ),
            (
                "message",
                Schema {
                    max_length: Some(32768),
                    ..Schema::typed("string")
                }
                .with_description(
                    "message is a human readable message indicating details about the transition. This may be an empty string.",
                ),
            ),
            (
                "observedGeneration",
                Schema {
                    minimum: Some(Number::from(0)),
                    ..Schema::formatted("integer", "int64")
                }
                .with_description(
                    "observedGeneration represents the .metadata.generation that the condition was set based upon.",
                ),
            ),
            (
                "reason",
                Schema {
                    max_length: Some(1024),
                    min_length: Some(1),
                    pattern: Some("^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$".into()),
                    ..Schema::typed("string")
                }
                .with_description(
                    "reason contains a programmatic identifier indicating the reason for the condition's last transition.",
                ),
            ),
            (
                "status",
                Schema {
                    enum_values: vec!["True".into(), "False".into(), "Unknown".into()],
                    ..Schema::typed("string")
                }
                .with_description("status of the condition, one of True, False, Unknown."),
            ),
            (
                "type",
                Schema {
                    max_length: Some(316),
                    pattern: Some(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$".into()),
                    ..Schema::typed("string")
                }
                .with_description("type of condition in CamelCase or in foo.example.com/CamelCase."),
            ),
        ],
        &["lastTransitionTime", "message", "reason", "status", "type"],
    );
    s.description = Some(
        "Condition contains details for one aspect of the current state of this API Resource."
            .into(),
    );
    s
}

fn label_selector() -> Schema {
    let strings_atomic = Schema {
        items: Some(Box::new(Schema::typed("string"))),
        list_type: Some("atomic".into()),
        ..Schema::typed("array")
    };
    let requirement = object(
        vec![
            (
                "key",
                Schema::typed("string")
                    .with_description("key is the label key that the selector applies to."),
            ),
            (
                "operator",
                Schema::typed("string").with_description(
                    "operator represents a key's relationship to a set of values. Valid operators are In, NotIn, Exists and DoesNotExist.",
                ),
            ),
            (
                "values",
                strings_atomic.with_description(
                    "values is an array of string values. If the operator is In or NotIn, the values array must be non-empty.",
                ),
            ),
        ],
        &["key", "operator"],
    );
    let mut s = object(
        vec![
            (
                "matchExpressions",
                Schema {
                    items: Some(Box::new(requirement)),
                    list_type: Some("atomic".into()),
                    ..Schema::typed("array")
                }
                .with_description(
                    "matchExpressions is a list of label selector requirements. The requirements are ANDed.",
                ),
            ),
            (
                "matchLabels",
                Schema {
                    additional_properties: Some(Box::new(Schema::typed("string"))),
                    ..Schema::typed("object")
                }
                .with_description(
                    "matchLabels is a map of {key,value} pairs. The requirements are ANDed.",
                ),
            ),
        ],
        &[],
    );
    s.map_type = Some("atomic".into());
    s.description = Some(
        "A label selector is a label query over a set of resources. An empty label selector matches all objects; a null one matches no objects."
            .into(),
    );
    s
}

/// The schema of a k8s-openapi (or serde_json) type, by its full path.
pub(super) fn external_schema(full: &[String]) -> Option<Schema> {
    let p: Vec<&str> = full.iter().map(String::as_str).collect();
    match p.as_slice() {
        ["serde_json", "Value"] => Some(Schema {
            preserve_unknown_fields: true,
            ..Schema::default()
        }),
        ["serde_json", "Map"] => Some(Schema {
            preserve_unknown_fields: true,
            ..Schema::typed("object")
        }),
        ["k8s_openapi", "ByteString"] => Some(Schema::formatted("string", "byte")),
        [
            "k8s_openapi",
            "apimachinery",
            "pkg",
            "api",
            "resource",
            "Quantity",
        ] => Some(quantity()),
        [
            "k8s_openapi",
            "apimachinery",
            "pkg",
            "util",
            "intstr",
            "IntOrString",
        ] => Some(Schema::int_or_string()),
        [rest @ .., last] if rest == K8S_META_V1 => match *last {
            "ObjectMeta" => Some(Schema::typed("object")),
            "Time" | "MicroTime" => Some(Schema::formatted("string", "date-time")),
            "Condition" => Some(condition()),
            "LabelSelector" => Some(label_selector()),
            _ => None,
        },
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The walk.
