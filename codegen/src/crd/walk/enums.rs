//! The walk of an enum, in each of serde's representations: unit variants as a string enum,
//! externally, internally (`tag`) and adjacently (`tag` + `content`) tagged data variants, and
//! `untagged` (the variants' common type).

use serde_json::Value;

use super::{Env, Resolved, SCALARS, Site, Walk, unsupported_serde};
use crate::crd::schema::Schema;
use crate::error::{Location, Result};
use crate::model::types::{Fields, RenameRule, TypeDef, Variant};

impl<'a> Walk<'a> {
    pub(super) fn enum_schema(
        &mut self,
        item: &'a TypeDef,
        all_variants: &'a [Variant],
        env: &Env,
    ) -> Result<Resolved> {
        let file = self.pkg.file(item);
        let c = item.serde.get()?;
        let site = Site {
            loc: Location::new(&file.path, item.pos),
            what: format!("enum `{}`", item.name),
        };
        if let Some(u) = &c.unsupported {
            return Err(site.err(unsupported_serde(u)));
        }
        struct V<'v> {
            name: String,
            variant: &'v Variant,
            rename_all: Option<RenameRule>,
            site: Site,
        }
        let mut variants = Vec::new();
        for v in all_variants {
            let a = v.serde.get()?;
            let vsite = Site {
                loc: Location::new(&file.path, v.pos),
                what: format!("variant `{}::{}`", item.name, v.written),
            };
            if a.skip || a.skip_serializing {
                continue;
            }
            if a.untagged || a.unsupported.is_some() {
                return Err(vsite.err(format!(
                    "#[serde({})] on a variant is not supported",
                    a.unsupported.as_deref().unwrap_or("untagged")
                )));
            }
            variants.push(V {
                name: a
                    .rename
                    .clone()
                    .unwrap_or_else(|| c.rename_all.map_or(v.name.clone(), |r| r.variant(&v.name))),
                variant: v,
                rename_all: a.rename_all.or(c.rename_all_fields),
                site: vsite,
            });
        }
        if variants.is_empty() {
            return Err(site.err("an enum without serializable variants has no schema"));
        }
        let owner = item.name.as_str();
        let all_optional = self.fields_optional(item);
        // The data of one variant: None for a unit variant.
        let data = |w: &mut Self, v: &V<'a>| -> Result<Option<Schema>> {
            match &v.variant.fields {
                Fields::Unit => Ok(None),
                Fields::Named(n) => w
                    .named_fields(
                        &format!("{owner}::{}", v.variant.written),
                        n,
                        file,
                        env,
                        v.rename_all,
                        all_optional,
                    )
                    .map(Some),
                Fields::Unnamed(u) if u.len() == 1 => w
                    .newtype(&format!("{owner}::{}", v.variant.written), &u[0], file, env)
                    .map(|r| Some(r.schema)),
                Fields::Unnamed(_) => Err(v.site.err(
                    "a tuple variant serializes as an array of mixed types, which a structural schema cannot describe",
                )),
            }
        };
        let names: Vec<Value> = variants
            .iter()
            .map(|v| Value::String(v.name.clone()))
            .collect();
        let tag_schema = || Schema {
            enum_values: names.clone(),
            ..Schema::typed("string")
        };
        let schema = if c.untagged {
            let mut schemas = Vec::new();
            for v in &variants {
                match data(self, v)? {
                    Some(s) => schemas.push(s),
                    None => {
                        return Err(v
                            .site
                            .err("a unit variant of an untagged enum serializes as null"));
                    }
                }
            }
            untagged(schemas).map_err(|m| site.err(m))?
        } else if let Some(tag) = &c.tag {
            let mut obj = Schema::typed("object");
            let mut content_schemas = Vec::new();
            for v in &variants {
                let Some(d) = data(self, v)? else { continue };
                match &c.content {
                    Some(_) => content_schemas.push(d),
                    None => {
                        if d.type_.as_deref() != Some("object") || d.additional_properties.is_some()
                        {
                            return Err(v.site.err(
                                "an internally tagged variant must hold a struct (its fields sit beside the tag)",
                            ));
                        }
                        merge_properties(&mut obj, d).map_err(|m| v.site.err(m))?;
                    }
                }
            }
            obj.required.clear();
            if obj.properties.contains_key(tag) {
                return Err(site.err(format!("the tag {tag:?} clashes with a field of a variant")));
            }
            obj.properties.insert(tag.clone(), tag_schema());
            obj.required.push(tag.clone());
            if let Some(content) = &c.content
                && !content_schemas.is_empty()
            {
                let merged = untagged(content_schemas).map_err(|m| {
                    site.err(format!("the content of an adjacently tagged enum: {m}"))
                })?;
                obj.properties.insert(content.clone(), merged);
            }
            obj
        } else {
            let mut datas = Vec::new();
            for v in &variants {
                datas.push((v, data(self, v)?));
            }
            let units = datas.iter().filter(|(_, d)| d.is_none()).count();
            if units == datas.len() {
                tag_schema()
            } else if units == 0 {
                let mut obj = Schema::typed("object");
                for (v, d) in datas {
                    if let Some(d) = d {
                        obj.properties.insert(v.name.clone(), d);
                        obj.one_of.push(Schema {
                            required: vec![v.name.clone()],
                            ..Schema::default()
                        });
                    }
                }
                obj
            } else {
                return Err(site.err(
                    "an externally tagged enum that mixes unit variants (strings) and data variants (objects) cannot be structural; give every variant data, or use #[serde(tag = \"…\")]",
                ));
            }
        };
        Ok(Resolved::of(schema))
    }
}

/// Merges `from`'s properties into `into`; a property defined differently twice is an error.
fn merge_properties(into: &mut Schema, from: Schema) -> std::result::Result<(), String> {
    for (k, v) in from.properties {
        match into.properties.get(&k) {
            Some(prev) if *prev != v => {
                return Err(format!(
                    "property {k:?} has different schemas in different variants"
                ));
            }
            Some(_) => {}
            None => {
                into.properties.insert(k, v);
            }
        }
    }
    Ok(())
}

/// The common schema of the variants of an untagged enum (or the contents of an adjacently
/// tagged one).
fn untagged(schemas: Vec<Schema>) -> std::result::Result<Schema, String> {
    let kinds: Vec<&str> = schemas.iter().map(Schema::kind).collect();
    if kinds.iter().all(|k| *k == "object")
        && schemas.iter().all(|s| s.additional_properties.is_none())
    {
        let mut obj = Schema::typed("object");
        for s in schemas {
            merge_properties(&mut obj, s)?;
        }
        return Ok(obj);
    }
    let mut distinct: Vec<&str> = kinds.clone();
    distinct.sort();
    distinct.dedup();
    match distinct.as_slice() {
        ["int-or-string"] => Ok(Schema::int_or_string()),
        [one] if SCALARS.contains(one) => {
            // Keep the format only when every variant has the same one (`i32` and `i64` differ).
            let format = schemas
                .first()
                .and_then(|f| f.format.clone())
                .filter(|f| schemas.iter().all(|s| s.format.as_ref() == Some(f)));
            Ok(Schema {
                format,
                ..Schema::typed(one)
            })
        }
        ["integer", "string"]
        | ["int-or-string", "integer"]
        | ["int-or-string", "string"]
        | ["int-or-string", "integer", "string"] => Ok(Schema::int_or_string()),
        _ => Err(format!(
            "variants of types {} cannot share one structural schema",
            distinct.join(", ")
        )),
    }
}
