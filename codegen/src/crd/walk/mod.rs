//! The schema walk of the `crd` stage: a pure function from a package's type table
//! ([`PackageTypes`], plain data built beside the model) to a
//! **structural** OpenAPI v3 schema (kube-apiserver's rules for CustomResourceDefinitions), held
//! as plain data in [`Schema`].
//!
//! What is mapped, and how:
//!
//! | Rust | schema |
//! | --- | --- |
//! | `String`, `&str`, `char` | `type: string` (`char`: length 1) |
//! | `bool` | `type: boolean` |
//! | `i8` `i16` `i32` `u8` `u16` | `type: integer, format: int32` (bounds of the narrower types as `minimum`/`maximum`) |
//! | `i64` `isize`, `u32` `u64` `usize` | `type: integer, format: int64` (unsigned: `minimum: 0`) |
//! | `f32` / `f64` | `type: number, format: float` / `double` |
//! | `Option<T>` | `T`, not required; `nullable: true` unless `skip_serializing_if` keeps `null` off the wire |
//! | `Vec<T>`, `VecDeque<T>`, `[T; N]`, `&[T]` | `type: array, items: T` |
//! | `BTreeSet<T>`, `HashSet<T>` (scalar `T`) | `type: array, x-kubernetes-list-type: set` |
//! | `BTreeMap<K, T>`, `HashMap<K, T>` (string-like `K`) | `type: object, additionalProperties: T` |
//! | `Box<T>`, `Arc<T>`, `Rc<T>` | `T` |
//! | a struct of the package | `type: object`, `properties`, `required`, inlined (no `$ref`) |
//! | a newtype struct, `#[serde(transparent)]` | the inner type |
//! | an enum of unit variants | `type: string, enum: […]` |
//! | an externally tagged enum of data variants | `type: object`, one property per variant, `oneOf` of `required` |
//! | an internally (`tag`) or adjacently (`tag` + `content`) tagged enum | `type: object`, the tag as a string enum, the variants' fields merged |
//! | an `untagged` enum | the variants' common type (objects merged; `integer` + `string` → int-or-string) |
//! | `serde_json::Value` | `x-kubernetes-preserve-unknown-fields: true` |
//! | k8s-openapi `ObjectMeta` | `type: object` |
//! | k8s-openapi `Time`, `MicroTime` | `type: string, format: date-time` |
//! | k8s-openapi `Quantity` | int-or-string with the quantity `pattern` |
//! | k8s-openapi `IntOrString` | `x-kubernetes-int-or-string: true` |
//! | k8s-openapi `Condition`, `LabelSelector` | their Kubernetes schemas |
//!
//! Serde attributes are honoured as serde applies them: `rename`, `rename_all` (structs and
//! enums, `rename_all_fields`), `skip`, `skip_serializing_if`, `default`, `flatten`,
//! `transparent`, `tag`, `content`, `untagged`. Doc comments become `description`s (tag lines
//! excluded). Field and type markers (`+kubebuilder:validation:*` …, see [`crate::crd::markers::apply_markers`]) refine
//! the result. Everything else — types of other packages, tuples, `#[serde(with)]`, recursion —
//! is an error naming the field and its `file:line:col`.
//!
//! This file resolves a type (paths, generics, k8s-openapi's types, the package's own types);
//! `structs.rs` walks a struct's fields, `enums.rs` an enum in each of serde's representations.

mod enums;
mod structs;

use std::collections::BTreeMap;

use serde_json::Number;

use crate::crd::known::external_schema;
use crate::crd::markers::apply_markers;
use crate::crd::schema::Schema;
use crate::error::{Error, Location, Result};
use crate::model::types::{
    Body, FileInfo, GenericArg, PackageTypes, PathArgs, TypeExpr, TypePath, normalize,
};

/// The schemas of one package's types, from its type table.
pub struct SchemaWalker<'a> {
    pkg: &'a PackageTypes,
    /// Package-level `+kubebuilder:validation:Optional`.
    fields_optional: bool,
}

impl<'a> SchemaWalker<'a> {
    /// A walker over the types of `pkg`.
    pub(crate) fn new(pkg: &'a PackageTypes) -> SchemaWalker<'a> {
        let fields_optional = pkg
            .package_tags
            .iter()
            .any(|t| t.key == "kubebuilder:validation:Optional");
        SchemaWalker {
            pkg,
            fields_optional,
        }
    }

    /// The `openAPIV3Schema` of the root kind `kind`: its fields, plus `apiVersion` and `kind`,
    /// with `metadata` reduced to `type: object` (the only form kube-apiserver accepts besides
    /// restrictions on name and generateName).
    pub fn kind_schema(&self, kind: &str) -> Result<Schema> {
        let Some(item) = self.pkg.types.get(kind) else {
            return Err(Error::file(
                "",
                format!("internal error: kind {kind} not found"),
            ));
        };
        let file = self.pkg.file(item);
        let site = Site {
            loc: Location::new(&file.path, item.pos),
            what: format!("kind `{kind}`"),
        };
        let mut walk = Walk {
            pkg: self.pkg,
            fields_optional: self.fields_optional,
            stack: Vec::new(),
        };
        let mut s = walk.local(kind, &[], file, &Env::new(), &site)?.schema;
        if s.type_.as_deref() != Some("object") || s.properties.is_empty() {
            return Err(site.err("a kind must be a struct with named fields"));
        }
        s.properties.insert(
            "apiVersion".into(),
            Schema::typed("string").with_description(
                "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
            ),
        );
        s.properties.insert(
            "kind".into(),
            Schema::typed("string").with_description(
                "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
            ),
        );
        s.properties
            .insert("metadata".into(), Schema::typed("object"));
        s.required.retain(|r| r != "metadata");
        // The root may carry no value validations of its own besides the properties'.
        s.nullable = false;
        Ok(s)
    }
}

/// Where a type is used, for errors: the field's location and a label such as
/// ``field `MydemoSpec.ip` ``.
struct Site {
    loc: Location,
    what: String,
}

impl Site {
    fn err(&self, msg: impl std::fmt::Display) -> Error {
        Error::at(self.loc.clone(), format!("{}: {msg}", self.what))
    }
}

/// A resolved type: its schema and whether it was an `Option`.
#[derive(Clone)]
struct Resolved {
    schema: Schema,
    optional: bool,
}

impl Resolved {
    fn of(schema: Schema) -> Resolved {
        Resolved {
            schema,
            optional: false,
        }
    }

    /// The schema of a value inside a collection: `null` is a possible element of an `Option`.
    fn element(self) -> Schema {
        let mut s = self.schema;
        if self.optional {
            s.nullable = true;
        }
        s
    }
}

/// Generic parameters bound to resolved arguments.
type Env = BTreeMap<String, Resolved>;

struct Walk<'a> {
    pkg: &'a PackageTypes,
    fields_optional: bool,
    /// The local types being expanded (recursion guard).
    stack: Vec<String>,
}

const SCALARS: &[&str] = &["string", "integer", "number", "boolean", "int-or-string"];

/// The error of a serde attribute the schema cannot follow.
fn unsupported_serde(u: &str) -> String {
    format!("#[serde({u})] changes the serialized form in a way the generator cannot follow")
}

impl<'a> Walk<'a> {
    fn resolve(
        &mut self,
        ty: &'a TypeExpr,
        file: &'a FileInfo,
        env: &Env,
        site: &Site,
    ) -> Result<Resolved> {
        match ty {
            TypeExpr::Reference { elem, .. } => match &**elem {
                TypeExpr::Path(p) if p.is_ident("str") => Ok(Resolved::of(Schema::typed("string"))),
                elem => self.resolve(elem, file, env, site),
            },
            TypeExpr::Array { elem, len } => {
                let items = self.resolve(elem, file, env, site)?.element();
                Ok(Resolved::of(Schema {
                    items: Some(Box::new(items)),
                    min_items: *len,
                    max_items: *len,
                    ..Schema::typed("array")
                }))
            }
            TypeExpr::Slice(elem) => {
                let items = self.resolve(elem, file, env, site)?.element();
                Ok(Resolved::of(Schema {
                    items: Some(Box::new(items)),
                    ..Schema::typed("array")
                }))
            }
            TypeExpr::Tuple { unit: true, .. } => Err(site.err(
                "the unit type `()` serializes as null, which a structural schema cannot describe",
            )),
            TypeExpr::Tuple { text, .. } => Err(site.err(format!(
                "the tuple `{text}` serializes as an array of mixed types, which a structural schema cannot describe; use a struct"
            ))),
            TypeExpr::Path(p) => self.resolve_path(p, file, env, site),
            TypeExpr::Other(text) => Err(site.err(format!(
                "type `{text}` cannot be expressed in a CRD schema"
            ))),
        }
    }

    fn resolve_path(
        &mut self,
        path: &'a TypePath,
        file: &'a FileInfo,
        env: &Env,
        site: &Site,
    ) -> Result<Resolved> {
        let names: Vec<String> = path.segments.iter().map(|s| s.name.clone()).collect();
        let Some(last_seg) = path.segments.last() else {
            return Err(site.err("empty type path"));
        };
        let mut args: Vec<&'a TypeExpr> = Vec::new();
        match &last_seg.args {
            PathArgs::None => {}
            PathArgs::Angle(a) => {
                for arg in a {
                    match arg {
                        GenericArg::Type(t) => args.push(t),
                        GenericArg::Lifetime => {}
                        GenericArg::Other(text) => {
                            return Err(site.err(format!(
                                "generic argument `{text}` is not supported in a CRD schema"
                            )));
                        }
                    }
                }
            }
            PathArgs::Parenthesized => {
                return Err(site.err(format!(
                    "function type `{}` cannot be serialized",
                    path.text
                )));
            }
        }
        for seg in path.segments.iter().take(names.len().saturating_sub(1)) {
            if !seg.args.is_empty() {
                return Err(site.err(format!("type `{}` cannot be resolved", path.text)));
            }
        }
        let imports = &file.imports;
        let text = path.text.as_str();
        if !path.leading_colon && names.len() == 1 {
            let n = &names[0];
            if let Some(r) = env.get(n) {
                if !args.is_empty() {
                    return Err(site.err(format!("type parameter `{n}` takes no arguments")));
                }
                return Ok(r.clone());
            }
            if self.pkg.types.contains_key(n) {
                return self.local(n, &args, file, env, site);
            }
            if let Some(full) = imports.names.get(n) {
                return self.known(full.clone(), &args, text, file, env, site);
            }
            for glob in &imports.globs {
                let mut full = glob.clone();
                full.push(n.clone());
                if external_schema(&normalize(full.clone())).is_some() {
                    return self.known(full, &args, text, file, env, site);
                }
            }
            return self.known(names, &args, text, file, env, site);
        }
        let full = match names[0].as_str() {
            "self" | "super" | "crate" if !path.leading_colon => names,
            first => match imports.names.get(first) {
                Some(p) if !path.leading_colon => {
                    p.iter().chain(names.iter().skip(1)).cloned().collect()
                }
                _ => names,
            },
        };
        self.known(full, &args, text, file, env, site)
    }

    /// Resolves a full path: std types, re-exported k8s-openapi types, `self::`/`super::` paths
    /// to types of this package.
    fn known(
        &mut self,
        full: Vec<String>,
        args: &[&'a TypeExpr],
        text: &str,
        file: &'a FileInfo,
        env: &Env,
        site: &Site,
    ) -> Result<Resolved> {
        let full = normalize(full);
        let Some(last) = full.last().cloned() else {
            return Err(site.err("empty type path"));
        };
        if matches!(full[0].as_str(), "self" | "super") && self.pkg.types.contains_key(&last) {
            return self.local(&last, args, file, env, site);
        }
        if let Some(s) = external_schema(&full) {
            if !args.is_empty() && full[0] != "serde_json" {
                return Err(site.err(format!("`{text}` takes no generic arguments")));
            }
            return Ok(Resolved::of(s));
        }
        let is_std = full.len() == 1
            || matches!(full[0].as_str(), "std" | "core" | "alloc")
            || full[0] == "indexmap" && matches!(last.as_str(), "IndexMap" | "IndexSet");
        let std_name = is_std.then_some(last.as_str());
        let arity = |n: usize| -> Result<()> {
            if args.len() == n {
                Ok(())
            } else {
                Err(site.err(format!(
                    "`{text}`: expected {n} generic argument(s), found {}",
                    args.len()
                )))
            }
        };
        let scalar = |s: Schema| -> Result<Resolved> {
            arity(0)?;
            Ok(Resolved::of(s))
        };
        let bounded = |min: i64, max: i64| -> Result<Resolved> {
            arity(0)?;
            Ok(Resolved::of(Schema {
                minimum: Some(Number::from(min)),
                maximum: Some(Number::from(max)),
                ..Schema::formatted("integer", "int32")
            }))
        };
        match std_name {
            Some("String") => scalar(Schema::typed("string")),
            Some("bool") => scalar(Schema::typed("boolean")),
            Some("char") => scalar(Schema {
                min_length: Some(1),
                max_length: Some(1),
                ..Schema::typed("string")
            }),
            Some("i32") => scalar(Schema::formatted("integer", "int32")),
            Some("i64" | "isize") => scalar(Schema::formatted("integer", "int64")),
            Some("i8") => bounded(i64::from(i8::MIN), i64::from(i8::MAX)),
            Some("i16") => bounded(i64::from(i16::MIN), i64::from(i16::MAX)),
            Some("u8") => bounded(0, i64::from(u8::MAX)),
            Some("u16") => bounded(0, i64::from(u16::MAX)),
            Some("u32") => scalar(Schema {
                minimum: Some(Number::from(0)),
                maximum: Some(Number::from(u32::MAX)),
                ..Schema::formatted("integer", "int64")
            }),
            Some("u64" | "usize") => scalar(Schema {
                minimum: Some(Number::from(0)),
                ..Schema::formatted("integer", "int64")
            }),
            Some("f32") => scalar(Schema::formatted("number", "float")),
            Some("f64") => scalar(Schema::formatted("number", "double")),
            Some("i128" | "u128") => {
                Err(site.err(format!("`{text}` does not fit Kubernetes' 64-bit integers")))
            }
            Some("Option") => {
                arity(1)?;
                let mut r = self.resolve(args[0], file, env, site)?;
                r.optional = true;
                Ok(r)
            }
            Some("Box" | "Arc" | "Rc") => {
                arity(1)?;
                self.resolve(args[0], file, env, site)
            }
            Some("Cow") => {
                arity(1)?;
                self.resolve(args[0], file, env, site)
            }
            Some("Vec" | "VecDeque" | "LinkedList") => {
                arity(1)?;
                let items = self.resolve(args[0], file, env, site)?.element();
                Ok(Resolved::of(Schema {
                    items: Some(Box::new(items)),
                    ..Schema::typed("array")
                }))
            }
            Some("BTreeSet" | "HashSet" | "IndexSet") => {
                arity(1)?;
                let items = self.resolve(args[0], file, env, site)?.element();
                if !SCALARS.contains(&items.kind()) {
                    return Err(site.err(format!(
                        "`{text}`: a set needs scalar items for x-kubernetes-list-type: set; use a Vec"
                    )));
                }
                Ok(Resolved::of(Schema {
                    items: Some(Box::new(items)),
                    list_type: Some("set".into()),
                    ..Schema::typed("array")
                }))
            }
            Some("BTreeMap" | "HashMap" | "IndexMap") => {
                arity(2)?;
                let key = self.resolve(args[0], file, env, site)?;
                if !matches!(key.schema.kind(), "string" | "integer") || key.optional {
                    return Err(site.err(format!(
                        "`{text}`: map keys must serialize as strings (String, integers or unit enums)"
                    )));
                }
                let values = self.resolve(args[1], file, env, site)?.element();
                Ok(Resolved::of(Schema {
                    additional_properties: Some(Box::new(values)),
                    ..Schema::typed("object")
                }))
            }
            Some("PhantomData") => Err(site.err("`PhantomData` serializes as null")),
            _ => {
                if full.len() == 1 {
                    return Err(site.err(format!(
                        "type `{text}` is not declared in this package; a CRD schema can only be derived from this package's types, std types, serde_json::Value and the k8s-openapi types ObjectMeta, Time, MicroTime, Condition, LabelSelector, Quantity and IntOrString"
                    )));
                }
                if full[0] == "k8s_openapi" {
                    return Err(site.err(format!(
                        "k8s-openapi type `{text}` has no schema mapping; supported: ObjectMeta, Time, MicroTime, Condition, LabelSelector, Quantity, IntOrString, ByteString"
                    )));
                }
                Err(site.err(format!(
                    "type `{text}` is not declared in this package (types of other packages or crates cannot be expressed in a CRD schema; import the k8s-openapi types by their k8s_openapi path)"
                )))
            }
        }
    }

    /// A struct or enum of this package, inlined. `args` are written in `file`, where `env`
    /// binds the caller's type parameters.
    fn local(
        &mut self,
        name: &str,
        args: &[&'a TypeExpr],
        file: &'a FileInfo,
        env: &Env,
        site: &Site,
    ) -> Result<Resolved> {
        let pkg = self.pkg;
        let Some(item) = pkg.types.get(name) else {
            return Err(site.err(format!("type `{name}` is not declared in this package")));
        };
        if self.stack.iter().any(|s| s == name) {
            return Err(site.err(format!(
                "type `{name}` is recursive; a structural schema has no references, so recursion cannot be expressed (mark the field +kubebuilder:pruning:PreserveUnknownFields with serde_json::Value instead)"
            )));
        }
        if item.generics.has_const {
            return Err(site.err(format!("type `{name}` has const generics")));
        }
        let params = &item.generics.type_params;
        if params.len() != args.len() {
            return Err(site.err(format!(
                "type `{name}` takes {} type argument(s), found {}",
                params.len(),
                args.len()
            )));
        }
        // Arguments are resolved where they are written (the caller's file and parameters).
        let mut inner = Env::new();
        for (p, a) in params.iter().zip(args) {
            inner.insert(p.clone(), self.resolve(a, file, env, site)?);
        }
        self.stack.push(name.to_string());
        let result = match &item.body {
            Body::Struct(fields) => self.struct_schema(item, fields, &inner),
            Body::Enum(variants) => self.enum_schema(item, variants, &inner),
        };
        self.stack.pop();
        let mut r = result?;
        if let Some(d) = &item.doc {
            r.schema.description = Some(d.clone());
        }
        apply_markers(&mut r.schema, &item.tags)?;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::known::QUANTITY_PATTERN;
    use crate::model::types::RenameRule;
    use crate::scan::{PackageSource, parse_source};
    use serde_json::Value;
    use serde_json::json;
    use std::path::Path;

    fn schema_of(types: &str) -> Result<Value> {
        let files = vec![
            parse_source(
                Path::new("apis/g/v1/mod.rs"),
                "//! +groupName=g.example.com\nmod types;\n".into(),
            )?,
            parse_source(Path::new("apis/g/v1/types.rs"), types.into())?,
        ];
        let src = PackageSource {
            group_dir: "g".into(),
            version: "v1".into(),
            dir: "apis/g/v1".into(),
            files,
        };
        let table = PackageTypes::new(&src);
        let s = SchemaWalker::new(&table).kind_schema("Foo")?;
        let mut v = s.to_json();
        // Leave out the boilerplate of every root.
        if let Some(p) = v.get_mut("properties").and_then(Value::as_object_mut) {
            p.remove("apiVersion");
            p.remove("kind");
            p.remove("metadata");
        }
        Ok(v)
    }

    fn spec_of(fields: &str) -> Result<Value> {
        let src = format!(
            "use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\npub struct Foo {{ pub metadata: ObjectMeta, pub spec: Spec }}\npub struct Spec {{\n{fields}\n}}\n"
        );
        Ok(schema_of(&src)?["properties"]["spec"].clone())
    }

    #[test]
    fn maps_rust_types() {
        let s = spec_of(
            "pub a: String, pub b: bool, pub c: i32, pub d: i64, pub e: u8, pub f: u32, pub g: u64, pub h: f32, pub i: f64,\n\
             pub j: Option<String>, pub k: Vec<i32>, pub l: std::collections::BTreeMap<String, bool>, pub m: HashMap<String, Vec<String>>,\n\
             pub n: Box<i16>, pub o: BTreeSet<String>, pub p: [u8; 4], pub q: char, pub r: serde_json::Value, pub s: Vec<Option<i64>>",
        )
        .unwrap();
        let p = &s["properties"];
        assert_eq!(p["a"], json!({"type": "string"}));
        assert_eq!(p["b"], json!({"type": "boolean"}));
        assert_eq!(p["c"], json!({"type": "integer", "format": "int32"}));
        assert_eq!(p["d"], json!({"type": "integer", "format": "int64"}));
        assert_eq!(
            p["e"],
            json!({"type": "integer", "format": "int32", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            p["f"],
            json!({"type": "integer", "format": "int64", "minimum": 0, "maximum": 4294967295u64})
        );
        assert_eq!(
            p["g"],
            json!({"type": "integer", "format": "int64", "minimum": 0})
        );
        assert_eq!(p["h"], json!({"type": "number", "format": "float"}));
        assert_eq!(p["i"], json!({"type": "number", "format": "double"}));
        assert_eq!(p["j"], json!({"type": "string", "nullable": true}));
        assert_eq!(
            p["k"],
            json!({"type": "array", "items": {"type": "integer", "format": "int32"}})
        );
        assert_eq!(
            p["l"],
            json!({"type": "object", "additionalProperties": {"type": "boolean"}})
        );
        assert_eq!(
            p["m"],
            json!({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}})
        );
        assert_eq!(
            p["n"],
            json!({"type": "integer", "format": "int32", "minimum": -32768, "maximum": 32767})
        );
        assert_eq!(
            p["o"],
            json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"})
        );
        assert_eq!(p["p"]["minItems"], 4);
        assert_eq!(p["p"]["maxItems"], 4);
        assert_eq!(p["q"]["maxLength"], 1);
        assert_eq!(
            p["r"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(p["s"]["items"]["nullable"], true);
        let required: Vec<&str> = s["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(!required.contains(&"j"));
        assert!(required.contains(&"a") && required.contains(&"s"));
    }

    #[test]
    fn k8s_types_and_imports() {
        let s = spec_of(
            "pub a: k8s_openapi::apimachinery::pkg::api::resource::Quantity, pub b: IntOrString, pub c: metav1::Time, pub d: Vec<Condition>, pub e: ObjectMeta",
        );
        assert!(s.is_err(), "IntOrString is not imported");
        let src = "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{self as metav1, Condition, ObjectMeta};\n\
            use k8s_openapi::apimachinery::pkg::util::intstr::*;\n\
            pub struct Foo { pub metadata: ObjectMeta, pub spec: Spec }\n\
            pub struct Spec { pub a: k8s_openapi::apimachinery::pkg::api::resource::Quantity, pub b: IntOrString, pub c: metav1::Time, pub d: Vec<Condition>, pub e: ObjectMeta }\n";
        let v = schema_of(src).unwrap();
        let p = &v["properties"]["spec"]["properties"];
        assert_eq!(p["a"]["x-kubernetes-int-or-string"], true);
        assert_eq!(p["a"]["pattern"], QUANTITY_PATTERN);
        assert_eq!(
            p["b"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true})
        );
        assert_eq!(p["c"], json!({"type": "string", "format": "date-time"}));
        assert_eq!(
            p["d"]["items"]["properties"]["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(p["e"], json!({"type": "object"}));
    }

    #[test]
    fn serde_attributes() {
        let s = spec_of(
            "#[serde(rename = \"x-y\")] pub a: i32,\n#[serde(skip)] pub b: i32,\n#[serde(default)] pub c: i32,\n\
             #[serde(skip_serializing_if = \"Vec::is_empty\")] pub d: Vec<i32>,\n#[serde(flatten)] pub e: Inner,\n\
             /// Docs of f.\n///\n/// +kubebuilder:validation:Minimum=1\n/// More.\npub f: i32,\npub r#type: String }\n\
             #[serde(rename_all = \"camelCase\")]\npub struct Inner { pub observed_generation: i64, pub service_name: Option<String>",
        )
        .unwrap();
        let p = &s["properties"];
        assert!(p.get("x-y").is_some() && p.get("a").is_none() && p.get("b").is_none());
        assert_eq!(p["observedGeneration"]["format"], "int64");
        assert_eq!(p["serviceName"]["nullable"], true);
        assert_eq!(p["f"]["description"], "Docs of f.\n\nMore.");
        assert_eq!(p["f"]["minimum"], 1);
        assert!(p.get("type").is_some());
        assert_eq!(
            s["required"],
            json!(["x-y", "observedGeneration", "f", "type"])
        );
    }

    #[test]
    fn enums_of_each_representation() {
        let v = spec_of(
            "pub a: Unit, pub b: Ext, pub c: Int, pub d: Adj, pub e: Untagged, pub f: Num }\n\
             #[serde(rename_all = \"kebab-case\")] pub enum Unit { FirstOne, #[serde(rename = \"2nd\")] Second, #[serde(skip)] Hidden }\n\
             pub enum Ext { A(String), B { x: i32 } }\n\
             #[serde(tag = \"kind\", rename_all = \"lowercase\")] pub enum Int { Cat { lives: i32 }, Dog(Dog), None }\n\
             pub struct Dog { pub good: bool }\n\
             #[serde(tag = \"t\", content = \"c\")] pub enum Adj { A(Dog), B { good: bool } }\n\
             #[serde(untagged)] pub enum Untagged { I(i64), S(String) }\n\
             #[serde(untagged)] pub enum Num { A(i32), B(i64) ",
        )
        .unwrap();
        let p = &v["properties"];
        assert_eq!(
            p["a"],
            json!({"type": "string", "enum": ["first-one", "2nd"]})
        );
        assert_eq!(
            p["b"],
            json!({"type": "object", "properties": {"A": {"type": "string"}, "B": {"type": "object", "properties": {"x": {"type": "integer", "format": "int32"}}, "required": ["x"]}}, "oneOf": [{"required": ["A"]}, {"required": ["B"]}]})
        );
        assert_eq!(
            p["c"]["properties"]["kind"]["enum"],
            json!(["cat", "dog", "none"])
        );
        assert_eq!(p["c"]["properties"]["lives"]["type"], "integer");
        assert_eq!(p["c"]["properties"]["good"]["type"], "boolean");
        assert_eq!(p["c"]["required"], json!(["kind"]));
        assert_eq!(
            p["d"]["properties"]["c"]["properties"]["good"]["type"],
            "boolean"
        );
        assert_eq!(p["e"]["x-kubernetes-int-or-string"], true);
        assert_eq!(p["f"], json!({"type": "integer"}));
        let e = spec_of("pub a: Mixed }\npub enum Mixed { A, B(i32) ").unwrap_err();
        assert!(e.to_string().contains("mixes unit variants"), "{e}");
    }

    #[test]
    fn markers_refine_and_check() {
        let s = spec_of(
            "// +kubebuilder:validation:Minimum=1\n// +kubebuilder:validation:Maximum=65535\npub port: i32,\n\
             // +kubebuilder:validation:Pattern=`^[a-z]+$`\n// +kubebuilder:validation:MinLength=1\n// +kubebuilder:validation:MaxLength=10\n// +kubebuilder:validation:Format=hostname\npub host: String,\n\
             // +kubebuilder:validation:Enum=True;False\n// +kubebuilder:default=\"True\"\n// +kubebuilder:validation:Optional\npub flag: String,\n\
             // +kubebuilder:validation:MinItems=1\n// +kubebuilder:validation:MaxItems=3\n// +listType=set\npub list: Vec<String>,\n\
             // +kubebuilder:validation:Required\npub opt: Option<f64>,\n\
             // +kubebuilder:pruning:PreserveUnknownFields\n// +kubebuilder:validation:MinProperties=1\npub any: BTreeMap<String, String>,\n\
             // +kubebuilder:validation:Minimum=0\n// +kubebuilder:validation:ExclusiveMinimum=true\n// +kubebuilder:validation:MultipleOf=0.5\npub ratio: f64",
        )
        .unwrap();
        let p = &s["properties"];
        assert_eq!(p["port"]["minimum"], 1);
        assert_eq!(p["port"]["maximum"], 65535);
        assert_eq!(p["host"]["pattern"], "^[a-z]+$");
        assert_eq!(p["host"]["format"], "hostname");
        assert_eq!(p["flag"]["enum"], json!(["True", "False"]));
        assert_eq!(p["flag"]["default"], "True");
        assert_eq!(p["list"]["x-kubernetes-list-type"], "set");
        assert_eq!(p["any"]["x-kubernetes-preserve-unknown-fields"], true);
        assert_eq!(p["ratio"]["exclusiveMinimum"], true);
        assert_eq!(p["ratio"]["multipleOf"], 0.5);
        assert_eq!(
            s["required"],
            json!(["port", "host", "list", "opt", "any", "ratio"])
        );
        let e = spec_of("// +kubebuilder:validation:MinLength=1\npub n: i32").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("apis/g/v1/types.rs:4:4: error: +kubebuilder:validation:MinLength: applies to string"),
            "{e}"
        );
        let e = spec_of("// +kubebuilder:validation:Minimal=1\npub n: i32").unwrap_err();
        assert!(e.to_string().contains("unknown marker"), "{e}");
        let e = spec_of("// +kubebuilder:default=abc\npub n: i32").unwrap_err();
        assert!(
            e.to_string().contains("does not match") || e.to_string().contains("not a valid"),
            "{e}"
        );
    }

    #[test]
    fn unsupported_types_name_the_field() {
        let e = spec_of("pub a: i32,\n    pub other: other_pkg::Thing").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("apis/g/v1/types.rs:5:9: error: field `Spec.other`: type `other_pkg::Thing` is not declared"),
            "{e}"
        );
        let e = spec_of("pub t: (i32, String)").unwrap_err();
        assert!(e.to_string().contains("tuple"), "{e}");
        let e = spec_of("pub n: Box<Node> }\npub struct Node { pub next: Option<Box<Node>> ")
            .unwrap_err();
        assert!(e.to_string().contains("recursive"), "{e}");
        let e = spec_of("#[serde(with = \"x\")] pub t: i32").unwrap_err();
        assert!(e.to_string().contains("#[serde(with)]"), "{e}");
        let e = spec_of("pub t: Unknown").unwrap_err();
        assert!(
            e.to_string().contains("not declared in this package"),
            "{e}"
        );
    }

    #[test]
    fn generics_are_instantiated() {
        let s = spec_of("pub w: Wrapper<Option<String>> }\npub struct Wrapper<T> { pub value: T ")
            .unwrap();
        assert_eq!(
            s["properties"]["w"]["properties"]["value"]["nullable"],
            true
        );
        assert!(s["properties"]["w"].get("required").is_none());
    }

    #[test]
    fn rename_rules_match_serde() {
        assert_eq!(
            RenameRule::Camel.field("observed_generation"),
            "observedGeneration"
        );
        assert_eq!(
            RenameRule::Pascal.field("observed_generation"),
            "ObservedGeneration"
        );
        assert_eq!(RenameRule::ScreamingKebab.field("a_b"), "A-B");
        assert_eq!(RenameRule::Snake.variant("FirstOne"), "first_one");
        assert_eq!(RenameRule::Camel.variant("FirstOne"), "firstOne");
        assert_eq!(RenameRule::Kebab.variant("FirstOne"), "first-one");
        assert_eq!(RenameRule::ScreamingSnake.variant("FirstOne"), "FIRST_ONE");
    }
}
