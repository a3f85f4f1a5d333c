//! CEL validation rules (`x-kubernetes-validations`) of custom resources, through the kube-rs
//! project's `kube-cel` crate: rules are compiled when the CRD is registered, checked (syntax,
//! estimated cost) when it is created or updated, and evaluated on every write with `self` and,
//! for transition rules, `oldSelf`. Errors are reported as kube-apiserver reports them: the
//! rule's `reason` and `fieldPath`, its `message` or `messageExpression`, the value for scalars.

use std::sync::Arc;

use kube_cel::{CompiledSchema, ErrorKind, ValidationError, Validator, compile_schema};
use serde_json::Value;

use crate::error::FieldError;
use crate::semantics::schema::render_value;

/// kube-apiserver's per-expression cost limit (`PerCallLimit`).
const PER_CALL_LIMIT: u64 = 1_000_000;
/// kube-apiserver's limit on the estimated cost of all rules of one schema.
const CRD_COST_LIMIT: u64 = 100_000_000;

/// The compiled rules of one schema, if it has any.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    compiled: Arc<CompiledSchema>,
    /// The schema, for correlating old list items with new ones.
    schema: Arc<Value>,
    /// Rules rewritten for `optionalOldSelf`, as `(rewritten, original)`.
    rewritten: Arc<Vec<(String, String)>>,
}

/// What `oldSelf` stands for in a rule with `optionalOldSelf: true`: an optional, empty on
/// create (kube-cel binds `null` there), holding the old value on update.
const OPTIONAL_OLD_SELF: &str = "(oldSelf == null ? optional.none() : optional.of(oldSelf))";

/// `rule` with every `oldSelf` identifier (outside string literals) replaced by `with`.
fn replace_old_self(rule: &str, with: &str) -> String {
    let chars: Vec<char> = rule.chars().collect();
    let word: Vec<char> = "oldSelf".chars().collect();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(rule.len());
    let mut i = 0;
    let mut quote: Option<char> = None;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            out.push(c);
            if c == '\\' && i + 1 < chars.len() {
                out.push(chars[i + 1]);
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if c == '"' || c == '\'' {
            quote = Some(c);
            out.push(c);
            i += 1;
            continue;
        }
        let starts = chars[i..].starts_with(&word)
            && (i == 0 || !(ident(chars[i - 1]) || chars[i - 1] == '.'))
            && chars.get(i + word.len()).is_none_or(|n| !ident(*n));
        if starts {
            out.push_str(with);
            i += word.len();
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The schema with the rules that set `optionalOldSelf` rewritten to see `oldSelf` as an
/// optional, as kube-apiserver binds it; records each rewrite.
fn rewrite_optional_old_self(node: &mut Value, rewritten: &mut Vec<(String, String)>) {
    match node {
        Value::Object(m) => {
            if let Some(Value::Array(rules)) = m.get_mut("x-kubernetes-validations") {
                for r in rules.iter_mut() {
                    let optional = r.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
                    if let (true, Some(text)) = (optional, r.get("rule").and_then(Value::as_str)) {
                        let text = text.to_string();
                        let new = replace_old_self(&text, OPTIONAL_OLD_SELF);
                        if new != text {
                            rewritten.push((new.clone(), text));
                            r["rule"] = Value::String(new);
                        }
                    }
                }
            }
            for (k, v) in m.iter_mut() {
                if k != "x-kubernetes-validations" && k != "default" && k != "enum" {
                    rewrite_optional_old_self(v, rewritten);
                }
            }
        }
        Value::Array(a) => a
            .iter_mut()
            .for_each(|v| rewrite_optional_old_self(v, rewritten)),
        _ => {}
    }
}

/// The old object with the items of every `x-kubernetes-list-type: map` list put at the
/// index of the new item with the same keys, so that transition rules compare an item with
/// its own old state, as kube-apiserver correlates them. A new item without an old one gets
/// a copy of itself (its transition rules then compare it with itself).
fn correlate(old: &Value, new: &Value, schema: &Value) -> Value {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            Value::Object(
                o.iter()
                    .map(|(k, ov)| {
                        let sub = props.and_then(|p| p.get(k)).or(additional);
                        let v = match (n.get(k), sub) {
                            (Some(nv), Some(sub)) => correlate(ov, nv, sub),
                            _ => ov.clone(),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            )
        }
        (Value::Array(o), Value::Array(n)) => {
            let Some(items) = schema.get("items") else {
                return old.clone();
            };
            let is_map =
                schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map");
            if !is_map {
                return Value::Array(
                    o.iter()
                        .zip(n.iter())
                        .map(|(ov, nv)| correlate(ov, nv, items))
                        .collect(),
                );
            }
            let keys: Vec<&str> = schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|k| k.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let key_of = |v: &Value| -> Vec<Value> {
                keys.iter()
                    .map(|k| v.get(*k).cloned().unwrap_or(Value::Null))
                    .collect()
            };
            Value::Array(
                n.iter()
                    .map(|nv| match o.iter().find(|ov| key_of(ov) == key_of(nv)) {
                        Some(ov) => correlate(ov, nv, items),
                        None => nv.clone(),
                    })
                    .collect(),
            )
        }
        _ => old.clone(),
    }
}

fn has_rules(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("x-kubernetes-validations") || m.values().any(has_rules),
        Value::Array(a) => a.iter().any(has_rules),
        _ => false,
    }
}

impl Rules {
    /// Compiles the rules of a version's `openAPIV3Schema`; `None` when it has none.
    pub(crate) fn compile(schema: &Value) -> Option<Rules> {
        if !has_rules(schema) {
            return None;
        }
        let mut rewritten = Vec::new();
        let mut for_eval = schema.clone();
        rewrite_optional_old_self(&mut for_eval, &mut rewritten);
        Some(Rules {
            compiled: Arc::new(compile_schema(&for_eval)),
            schema: Arc::new(schema.clone()),
            rewritten: Arc::new(rewritten),
        })
    }
}

/// The value at a dotted field path (`spec.items[1].name`), if any.
pub(crate) fn value_at<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !name.is_empty() {
            cur = cur.get(name)?;
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let idx = idx.trim_end_matches(']');
            cur = match idx.parse::<usize>() {
                Ok(i) => cur.get(i)?,
                Err(_) => cur.get(idx.trim_matches('"'))?,
            };
        }
    }
    Some(cur)
}

fn to_field_error(e: &ValidationError, obj: &Value) -> FieldError {
    let path = e.field_path.trim_start_matches('.').to_string();
    let value = value_at(obj, &path);
    let scalar = value.is_some_and(|v| !v.is_object() && !v.is_array());
    let invalid = |detail: String| match value {
        Some(v) if scalar => FieldError::invalid(path.clone(), render_value(v), detail),
        _ => FieldError {
            field: path.clone(),
            kind: crate::error::FieldErrorKind::InvalidOmitted,
            detail,
        },
    };
    match e.kind {
        ErrorKind::ValidationFailure => match e.reason.as_deref() {
            Some("FieldValueForbidden") => FieldError::forbidden(path.clone(), e.message.clone()),
            Some("FieldValueRequired") => FieldError::required(path.clone(), e.message.clone()),
            Some("FieldValueDuplicate") => {
                FieldError::duplicate(path.clone(), value.map(render_value).unwrap_or_default())
            }
            _ => invalid(e.message.clone()),
        },
        _ => invalid(format!("{} evaluating rule: {}", e.message, e.rule)),
    }
}

/// Evaluates the rules against a write. On updates, a rule that does not use `oldSelf` and
/// fails on a value the update did not change is ratcheted: a warning, not an error, as
/// kube-apiserver does since CRD validation ratcheting.
pub(crate) fn validate(
    rules: &Rules,
    obj: &Value,
    old: Option<&Value>,
) -> (Vec<FieldError>, Vec<String>) {
    thread_local! {
        static VALIDATOR: Validator = Validator::new();
    }
    let correlated = old.map(|o| correlate(o, obj, &rules.schema));
    let old = correlated.as_ref();
    let result = VALIDATOR.with(|v| v.validate_compiled(&rules.compiled, obj, old));
    let mut errs = Vec::new();
    let mut warnings = Vec::new();
    if let Err(failures) = result {
        let mut failures = failures.into_vec();
        for e in failures.iter_mut() {
            if let Some((_, original)) = rules.rewritten.iter().find(|(r, _)| *r == e.rule) {
                e.message = e.message.replace(&e.rule, original);
                e.rule = original.clone();
            }
        }
        for e in failures.iter() {
            let fe = to_field_error(e, obj);
            let unchanged = old.is_some_and(|o| {
                let p = e.field_path.trim_start_matches('.');
                value_at(o, p) == value_at(obj, p)
            });
            if unchanged && !e.rule.contains("oldSelf") && e.kind == ErrorKind::ValidationFailure {
                warnings.push(fe.to_string());
            } else {
                errs.push(fe);
            }
        }
    }
    (errs, warnings)
}

/// The rule as the Go struct prints it in CRD validation errors.
fn rule_repr(rule: &Value) -> String {
    let s = |k: &str| {
        rule.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let reason = rule
        .get("reason")
        .and_then(Value::as_str)
        .map_or(Value::Null, |r| Value::String(r.to_string()));
    let optional = rule.get("optionalOldSelf").cloned().unwrap_or(Value::Null);
    #[derive(serde::Serialize)]
    #[serde(rename_all = "PascalCase")]
    struct GoRule {
        rule: String,
        message: String,
        message_expression: String,
        reason: Value,
        field_path: String,
        optional_old_self: Value,
    }
    let v = GoRule {
        rule: s("rule"),
        message: s("message"),
        message_expression: s("messageExpression"),
        reason,
        field_path: s("fieldPath"),
        optional_old_self: optional,
    };
    // Go's encoding/json escapes <, > and & in strings.
    serde_json::to_string(&v)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn cost_message(what: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{what} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The estimated cost kube-cel reports for a rule over budget, if it is.
fn estimated_cost(rule: &str, node: &CompiledSchema) -> Option<u64> {
    kube_cel::estimate_rule_cost(rule, node)
        .into_iter()
        .find(|w| matches!(w.kind, kube_cel::WarningKind::CostExceeded))
        .and_then(|w| {
            w.message
                .split_whitespace()
                .nth(2)
                .and_then(|n| n.parse::<u64>().ok())
        })
}

/// Checks the rules of a CRD schema at `path` (`spec.validation.openAPIV3Schema`): every rule
/// must compile and stay within the cost limits.
pub(crate) fn check_crd_schema(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut total = 0u64;
    let mut over = Vec::new();
    walk(schema, path, &mut errs, &mut total, &mut over);
    if total > CRD_COST_LIMIT {
        for p in over {
            errs.push(FieldError::forbidden(
                p,
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
            ));
        }
        errs.push(FieldError::forbidden(
            path,
            cost_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total,
                CRD_COST_LIMIT,
            ),
        ));
    }
    errs
}

fn walk(
    node: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
    total: &mut u64,
    over: &mut Vec<String>,
) {
    let Some(m) = node.as_object() else {
        return;
    };
    if let Some(rules) = m.get("x-kubernetes-validations").and_then(Value::as_array) {
        let compiled = compile_schema(node);
        for (i, rule) in rules.iter().enumerate() {
            let field = format!("{path}.x-kubernetes-validations[{i}].rule");
            let text = rule.get("rule").and_then(Value::as_str).unwrap_or("");
            match compiled.validations.get(i) {
                Some(Err(e)) => {
                    let source = match e {
                        kube_cel::CompilationError::Parse { source, .. }
                        | kube_cel::CompilationError::MessageExpressionParse { source, .. } => {
                            source.to_string()
                        }
                        other => other.to_string(),
                    };
                    let source = source.replace("\n| ", "\n | ");
                    let source = if source.starts_with("ERROR: ") {
                        source
                    } else {
                        format!("ERROR: {source}")
                    };
                    errs.push(FieldError::invalid(
                        field,
                        rule_repr(rule),
                        format!("compilation failed: {source}"),
                    ));
                }
                Some(Ok(_)) => {
                    if let Some(cost) = estimated_cost(text, &compiled) {
                        *total = total.saturating_add(cost);
                        if cost > PER_CALL_LIMIT {
                            errs.push(FieldError::forbidden(
                                field.clone(),
                                cost_message("estimated rule cost", cost, PER_CALL_LIMIT),
                            ));
                            over.push(field);
                        }
                    }
                }
                None => {}
            }
        }
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (k, child) in props {
            walk(child, &format!("{path}.properties[{k}]"), errs, total, over);
        }
    }
    if let Some(items) = m.get("items") {
        walk(items, &format!("{path}.items"), errs, total, over);
    }
    if let Some(ap) = m.get("additionalProperties").filter(|a| a.is_object()) {
        walk(
            ap,
            &format!("{path}.additionalProperties"),
            errs,
            total,
            over,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.minReplicas <= self.replicas", "message": "replicas must be at least minReplicas", "fieldPath": ".replicas", "reason": "FieldValueForbidden"},
            {"rule": "!has(oldSelf.mode) || self.mode == oldSelf.mode", "message": "mode is immutable"}],
        "properties": {
            "replicas": {"type": "integer"}, "minReplicas": {"type": "integer", "default": 0},
            "mode": {"type": "string"},
            "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('n-')", "message": "must start with n-"}]},
            "size": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "size may only grow"}]}
        }}}})
    }

    #[test]
    fn rules_and_transition_rules() {
        let rules = Rules::compile(&schema()).unwrap_or_else(|| panic!("rules"));
        let obj = json!({"spec": {"replicas": 2, "minReplicas": 5, "name": "bad", "mode": "fast", "size": 3}});
        let (errs, _) = validate(&rules, &obj, None);
        let mut got: Vec<String> = errs.iter().map(ToString::to_string).collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                "spec.name: Invalid value: \"bad\": must start with n-",
                "spec.replicas: Forbidden: replicas must be at least minReplicas",
            ]
        );
        let old = json!({"spec": {"replicas": 2, "name": "n-1", "mode": "fast", "size": 3}});
        let new = json!({"spec": {"replicas": 2, "name": "n-1", "mode": "slow", "size": 1}});
        let (errs, _) = validate(&rules, &new, Some(&old));
        let mut got: Vec<String> = errs.iter().map(ToString::to_string).collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                "spec.size: Invalid value: 1: size may only grow",
                "spec: Invalid value: mode is immutable",
            ]
        );
    }

    #[test]
    fn crd_checks() {
        let bad = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.x >"}]});
        let errs = check_crd_schema(&bad, "spec.validation.openAPIV3Schema");
        assert_eq!(errs.len(), 1);
        assert!(
            errs[0].to_string().starts_with("spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {\"Rule\":\"self.x \\u003e\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: "),
            "{}",
            errs[0]
        );
    }
}
