//! The walk of a struct: its named fields (with `flatten`, `skip`, `default`, renames and
//! markers), a newtype's inner type.

use super::{Env, Resolved, Site, Walk, unsupported_serde};
use crate::crd::markers::apply_markers;
use crate::crd::schema::Schema;
use crate::error::{Location, Result};
use crate::model::types::{Field, Fields, FileInfo, RenameRule, TypeDef};

impl<'a> Walk<'a> {
    /// The fields' default required-ness of a struct: `+kubebuilder:validation:Optional` on the
    /// type or the package makes every field optional unless marked Required.
    pub(super) fn fields_optional(&self, item: &TypeDef) -> bool {
        let on_type = item.tags.iter().find_map(|t| match t.key.as_str() {
            "kubebuilder:validation:Optional" => Some(true),
            "kubebuilder:validation:Required" => Some(false),
            _ => None,
        });
        on_type.unwrap_or(self.fields_optional)
    }

    pub(super) fn struct_schema(
        &mut self,
        item: &'a TypeDef,
        fields: &'a Fields,
        env: &Env,
    ) -> Result<Resolved> {
        let file = self.pkg.file(item);
        let c = item.serde.get()?;
        let site = Site {
            loc: Location::new(&file.path, item.pos),
            what: format!("type `{}`", item.name),
        };
        if let Some(u) = &c.unsupported {
            return Err(site.err(unsupported_serde(u)));
        }
        if c.tag.is_some() {
            return Err(site.err("#[serde(tag)] on a struct is not supported"));
        }
        let owner = item.name.as_str();
        match fields {
            Fields::Named(n) if !c.transparent => {
                let obj = self.named_fields(
                    owner,
                    n,
                    file,
                    env,
                    c.rename_all,
                    c.default || self.fields_optional(item),
                )?;
                Ok(Resolved::of(obj))
            }
            Fields::Named(n) => {
                let mut fields = n
                    .iter()
                    .filter(|f| f.serde.ok().is_some_and(|a| !a.skip));
                match (fields.next(), fields.next()) {
                    (Some(f), None) => self.newtype(owner, f, file, env),
                    _ => Err(site.err("#[serde(transparent)] needs exactly one field")),
                }
            }
            Fields::Unnamed(u) if u.len() == 1 => self.newtype(owner, &u[0], file, env),
            Fields::Unnamed(u) => Err(site.err(format!(
                "a tuple struct with {} fields serializes as an array of mixed types, which a structural schema cannot describe",
                u.len()
            ))),
            Fields::Unit => Err(site.err("a unit struct serializes as null")),
        }
    }

    pub(super) fn field_site(owner: &str, f: &Field, index: usize, file: &FileInfo) -> Site {
        let label = match &f.ident {
            Some(i) => i.clone(),
            None => index.to_string(),
        };
        Site {
            loc: Location::new(&file.path, f.pos),
            what: format!("field `{owner}.{label}`"),
        }
    }

    pub(super) fn newtype(
        &mut self,
        owner: &str,
        f: &'a Field,
        file: &'a FileInfo,
        env: &Env,
    ) -> Result<Resolved> {
        let site = Self::field_site(owner, f, 0, file);
        let a = f.serde.get()?;
        if let Some(u) = &a.unsupported {
            return Err(site.err(unsupported_serde(u)));
        }
        let mut r = self.resolve(&f.ty, file, env, &site)?;
        apply_markers(&mut r.schema, &f.tags)?;
        if r.optional {
            r.schema.nullable = true;
            r.optional = false;
        }
        Ok(r)
    }

    /// The object schema of named fields (a struct, or a struct variant).
    pub(super) fn named_fields(
        &mut self,
        owner: &str,
        fields: &'a [Field],
        file: &'a FileInfo,
        env: &Env,
        rename_all: Option<RenameRule>,
        all_optional: bool,
    ) -> Result<Schema> {
        let mut out = Schema::typed("object");
        for (i, f) in fields.iter().enumerate() {
            let site = Self::field_site(owner, f, i, file);
            let a = f.serde.get()?;
            if a.skip {
                continue;
            }
            if let Some(u) = &a.unsupported {
                return Err(site.err(format!(
                    "{}; give the field a type the generator can see",
                    unsupported_serde(u)
                )));
            }
            let ident = f.ident.clone().unwrap_or_default();
            let name = a
                .rename
                .clone()
                .unwrap_or_else(|| rename_all.map_or(ident.clone(), |r| r.field(&ident)));
            let mut r = self.resolve(&f.ty, file, env, &site)?;
            let flags = apply_markers(&mut r.schema, &f.tags)?;
            if a.flatten {
                if r.schema.type_.as_deref() != Some("object")
                    || r.schema.additional_properties.is_some()
                    || r.schema.preserve_unknown_fields
                {
                    return Err(site.err(
                        "#[serde(flatten)] is only supported for structs (a flattened map would put additionalProperties beside properties, which structural schemas forbid)",
                    ));
                }
                let keep_required = !r.optional && !a.default && !all_optional;
                for (k, v) in r.schema.properties {
                    if out.properties.insert(k.clone(), v).is_some() {
                        return Err(
                            site.err(format!("flattened property {k:?} is already defined"))
                        );
                    }
                }
                if keep_required {
                    out.required.extend(r.schema.required);
                }
                continue;
            }
            if let Some(d) = &f.doc {
                r.schema.description = Some(d.clone());
            }
            let optional = r.optional
                || a.default
                || all_optional
                || a.skip_serializing_if
                || a.skip_deserializing;
            let required = flags.required.unwrap_or(!optional);
            if r.optional && !a.skip_serializing_if {
                r.schema.nullable = true;
            }
            if out.properties.insert(name.clone(), r.schema).is_some() {
                return Err(site.err(format!("property {name:?} is defined twice")));
            }
            if required {
                out.required.push(name);
            }
        }
        Ok(out)
    }
}
