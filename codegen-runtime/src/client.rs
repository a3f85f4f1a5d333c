//! The typed REST client that every generated kind client wraps.
//!
//! A generated `MydemoClient` is a thin newtype over [`TypedClient<Mydemo>`] that exposes only the
//! verbs its `+genclient` tags allow; all request building, encoding and decoding lives here, so
//! generated code stays small and the behaviour is tested once. Requests are built with
//! [`kube::core::Request`] and sent through the [`kube::Client`], so every error is a
//! [`kube::Error`] and [`crate::api_status`] classifies it.
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> kube::Result<()> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::GetParams;
//! use kube_codegen_runtime::client::TypedClient;
//!
//! let cms = TypedClient::<ConfigMap>::new(client, Some("default"));
//! let cm = cms.get("kube-root-ca.crt", &GetParams::default()).await?;
//! # Ok(()) }
//! ```

use std::fmt::Debug;
use std::marker::PhantomData;

use either::Either;
use futures::{StreamExt, stream::BoxStream};
use kube::api::{
    DeleteParams, GetParams, ListParams, ObjectList, Patch, PatchParams, PostParams, Request,
    WatchEvent, WatchParams,
};
use kube::core::Status;
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::apply::{ApplyConfiguration, ApplyOptions};

/// A stream of watch events, as returned by the `watch` verb.
pub type WatchStream<K> = BoxStream<'static, kube::Result<WatchEvent<K>>>;

/// A client for one resource type in one namespace (or all namespaces, or cluster scope).
pub struct TypedClient<K> {
    client: Client,
    request: Request,
    namespace: Option<String>,
    _kind: PhantomData<fn() -> K>,
}

impl<K> Clone for TypedClient<K> {
    fn clone(&self) -> Self {
        TypedClient {
            client: self.client.clone(),
            request: self.request.clone(),
            namespace: self.namespace.clone(),
            _kind: PhantomData,
        }
    }
}

impl<K> Debug for TypedClient<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedClient")
            .field("url_path", &self.request.url_path)
            .field("namespace", &self.namespace)
            .finish()
    }
}

/// Serializes `obj`, filling in `apiVersion` and `kind` when the type does not write them itself
/// (the API server refuses custom resources without them).
fn encode<T: Serialize>(obj: &T, type_meta: Option<(&str, &str)>) -> kube::Result<Value> {
    let mut value = serde_json::to_value(obj).map_err(kube::Error::SerdeError)?;
    if let (Some((api_version, kind)), Value::Object(map)) = (type_meta, &mut value) {
        for (key, v) in [("apiVersion", api_version), ("kind", kind)] {
            let missing = map
                .get(key)
                .is_none_or(|cur| cur.as_str().is_none_or(str::is_empty));
            if missing {
                map.insert(key.to_string(), Value::String(v.to_string()));
            }
        }
    }
    Ok(value)
}

fn to_bytes(value: &Value) -> kube::Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(kube::Error::SerdeError)
}

fn build(
    r: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
) -> kube::Result<http::Request<Vec<u8>>> {
    r.map_err(kube::Error::BuildRequest)
}

impl<K> TypedClient<K>
where
    K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned + Send + 'static,
{
    /// A client for `K` in `namespace`; `None` (or an empty namespace) addresses all namespaces
    /// for namespaced kinds, and is the only choice for cluster-scoped kinds.
    pub fn new(client: Client, namespace: Option<&str>) -> Self {
        let namespace = namespace.filter(|ns| !ns.is_empty()).map(String::from);
        let url = K::url_path(&(), namespace.as_deref());
        TypedClient {
            client,
            request: Request::new(url),
            namespace,
            _kind: PhantomData,
        }
    }

    /// The underlying client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The namespace this client addresses, if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The collection's URL path, such as `/apis/crddemo.k8s.io/v1/namespaces/default/mydemos`.
    pub fn url_path(&self) -> &str {
        &self.request.url_path
    }

    fn type_meta() -> (String, String) {
        (K::api_version(&()).into_owned(), K::kind(&()).into_owned())
    }

    fn encode_object(obj: &K) -> kube::Result<Value> {
        let (av, kind) = Self::type_meta();
        encode(obj, Some((&av, &kind)))
    }

    fn name_of(obj: &K) -> kube::Result<String> {
        match obj.meta().name.as_deref() {
            Some(n) if !n.is_empty() => Ok(n.to_string()),
            _ => Err(kube::Error::BuildRequest(
                kube::core::request::Error::Validation(format!(
                    "{} has no metadata.name",
                    K::kind(&())
                )),
            )),
        }
    }

    /// GET one object.
    pub async fn get(&self, name: &str, params: &GetParams) -> kube::Result<K> {
        self.client
            .request(build(self.request.get(name, params))?)
            .await
    }

    /// GET the collection, decoded as the list type `L` (the kind's `List` type or
    /// [`ObjectList<K>`]).
    pub async fn list<L: DeserializeOwned>(&self, params: &ListParams) -> kube::Result<L> {
        self.client.request(build(self.request.list(params))?).await
    }

    /// Watch the collection from `resource_version` (`"0"` or `""` for "any").
    pub async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> kube::Result<WatchStream<K>> {
        let events = self
            .client
            .request_events::<K>(build(self.request.watch(params, resource_version))?)
            .await?;
        Ok(events.boxed())
    }

    /// POST a new object to the collection.
    pub async fn create(&self, obj: &K, params: &PostParams) -> kube::Result<K> {
        let body = to_bytes(&Self::encode_object(obj)?)?;
        self.client
            .request(build(self.request.create(params, body))?)
            .await
    }

    /// PUT an object; its `metadata.resourceVersion` makes the update conditional.
    pub async fn update(&self, obj: &K, params: &PostParams) -> kube::Result<K> {
        let name = Self::name_of(obj)?;
        let body = to_bytes(&Self::encode_object(obj)?)?;
        self.client
            .request(build(self.request.replace(&name, params, body))?)
            .await
    }

    /// PUT an object's `status` subresource.
    pub async fn update_status(&self, obj: &K, params: &PostParams) -> kube::Result<K> {
        let name = Self::name_of(obj)?;
        let body = to_bytes(&Self::encode_object(obj)?)?;
        self.client
            .request(build(
                self.request
                    .replace_subresource("status", &name, params, body),
            )?)
            .await
    }

    /// PATCH an object (merge, JSON, strategic or apply patch).
    pub async fn patch<P: Serialize + Debug>(
        &self,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> kube::Result<K> {
        self.client
            .request(build(self.request.patch(name, params, patch))?)
            .await
    }

    /// Server-side apply a typed apply configuration (client-go's `Apply`): PATCH
    /// `application/apply-patch+yaml` to the object the configuration names, with `opts`'s
    /// field manager, force and dry run. The body is the configuration as it serializes, so
    /// only the fields that were set are claimed; `apiVersion` and `kind` are filled in when
    /// the configuration lacks them. Returns the object as stored.
    ///
    /// The request goes to this client's namespace; a configuration without `metadata.name`
    /// is refused before anything is sent.
    pub async fn apply<A>(&self, ac: &A, opts: &ApplyOptions) -> kube::Result<K>
    where
        A: ApplyConfiguration<Object = K>,
    {
        self.apply_to(ac, None, opts).await
    }

    /// Server-side apply a typed apply configuration to the `status` subresource (client-go's
    /// `ApplyStatus`): only the configuration's `status` is applied; the field manager's
    /// status fields are tracked apart from its main-resource fields.
    pub async fn apply_status<A>(&self, ac: &A, opts: &ApplyOptions) -> kube::Result<K>
    where
        A: ApplyConfiguration<Object = K>,
    {
        self.apply_to(ac, Some("status"), opts).await
    }

    async fn apply_to<A>(
        &self,
        ac: &A,
        subresource: Option<&str>,
        opts: &ApplyOptions,
    ) -> kube::Result<K>
    where
        A: ApplyConfiguration<Object = K>,
    {
        self.apply_configuration_as(ac, subresource, opts).await
    }

    /// Server-side apply a configuration of this kind to the object it names (or to that
    /// object's `subresource`), decoding the answer as `R`: the typed `apply` verbs, and
    /// `+genclient:method=…,verb=apply` extensions whose input is the kind itself.
    pub async fn apply_configuration_as<A, R>(
        &self,
        ac: &A,
        subresource: Option<&str>,
        opts: &ApplyOptions,
    ) -> kube::Result<R>
    where
        A: ApplyConfiguration<Object = K>,
        R: DeserializeOwned,
    {
        let name = match ac.name() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(kube::Error::BuildRequest(
                    kube::core::request::Error::Validation(format!(
                        "the {} apply configuration has no metadata.name",
                        K::kind(&())
                    )),
                ));
            }
        };
        let (av, kind) = Self::type_meta();
        let patch = Patch::Apply(encode(ac, Some((&av, &kind)))?);
        let params = opts.patch_params();
        let req = match subresource {
            None => self.request.patch(&name, &params, &patch),
            Some(sub) => self.request.patch_subresource(sub, &name, &params, &patch),
        };
        self.client.request(build(req)?).await
    }

    /// DELETE an object: `Left` with the object while finalizers keep it, `Right` with the
    /// server's `Status` once it is gone.
    pub async fn delete(
        &self,
        name: &str,
        params: &DeleteParams,
    ) -> kube::Result<Either<K, Status>> {
        self.client
            .request_status(build(self.request.delete(name, params))?)
            .await
    }

    /// DELETE every object of the collection that `list` selects.
    pub async fn delete_collection<L: DeserializeOwned>(
        &self,
        params: &DeleteParams,
        list: &ListParams,
    ) -> kube::Result<Either<L, Status>> {
        self.client
            .request_status(build(self.request.delete_collection(params, list))?)
            .await
    }

    /// GET the object `name` (or its `subresource`) decoded as `R`.
    pub async fn get_as<R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        params: &GetParams,
    ) -> kube::Result<R> {
        let req = match subresource {
            None => self.request.get(name, params),
            Some(sub) => {
                kube::core::request::Request::new(format!("{}/{}", self.request.url_path, name))
                    .get(sub, params)
            }
        };
        self.client.request(build(req)?).await
    }

    /// GET the collection (or the `subresource` of object `name`) as a list of `R`.
    pub async fn list_as<R: Clone + DeserializeOwned>(
        &self,
        sub: Option<(&str, &str)>,
        params: &ListParams,
    ) -> kube::Result<ObjectList<R>> {
        let req = match sub {
            None => self.request.list(params),
            Some((name, sub)) => {
                Request::new(format!("{}/{}/{}", self.request.url_path, name, sub)).list(params)
            }
        };
        self.client.request(build(req)?).await
    }

    /// POST `input` to the collection, or to `subresource` of object `name`, decoding `R`.
    pub async fn create_as<I: Serialize + 'static, R: DeserializeOwned>(
        &self,
        sub: Option<(&str, &str)>,
        input: &I,
        params: &PostParams,
    ) -> kube::Result<R> {
        let body = to_bytes(&Self::encode_input(input)?)?;
        let req = match sub {
            None => self.request.create(params, body),
            Some((name, sub)) => self.request.create_subresource(sub, name, params, body),
        };
        self.client.request(build(req)?).await
    }

    /// PUT `input` to object `name` (or to its `subresource`), decoding `R`.
    pub async fn update_as<I: Serialize + 'static, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        input: &I,
        params: &PostParams,
    ) -> kube::Result<R> {
        let body = to_bytes(&Self::encode_input(input)?)?;
        let req = match subresource {
            None => self.request.replace(name, params, body),
            Some(sub) => self.request.replace_subresource(sub, name, params, body),
        };
        self.client.request(build(req)?).await
    }

    /// PUT `input` to the object it names (`metadata.name` of `input`), decoding `R`.
    pub async fn update_object_as<I: Resource + Serialize + 'static, R: DeserializeOwned>(
        &self,
        input: &I,
        params: &PostParams,
    ) -> kube::Result<R> {
        let name = match input.meta().name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(kube::Error::BuildRequest(
                    kube::core::request::Error::Validation("the input has no metadata.name".into()),
                ));
            }
        };
        self.update_as(&name, None, input, params).await
    }

    /// PATCH object `name` (or its `subresource`), decoding `R`.
    pub async fn patch_as<P: Serialize + Debug, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> kube::Result<R> {
        let req = match subresource {
            None => self.request.patch(name, params, patch),
            Some(sub) => self.request.patch_subresource(sub, name, params, patch),
        };
        self.client.request(build(req)?).await
    }

    /// Server-side apply `input` to object `name` (or its `subresource`), decoding `R`.
    pub async fn apply_as<I: Serialize + 'static, R: DeserializeOwned>(
        &self,
        name: &str,
        subresource: Option<&str>,
        input: &I,
        params: &PatchParams,
    ) -> kube::Result<R> {
        let patch = Patch::Apply(Self::encode_input(input)?);
        self.patch_as(name, subresource, &patch, params).await
    }

    /// Encodes an extension's input: when `I` is `K` itself, `apiVersion` and `kind` are filled
    /// in as for the standard verbs; other types (such as `autoscaling/v1` `Scale`) write their own.
    fn encode_input<I: Serialize + 'static>(input: &I) -> kube::Result<Value> {
        if std::any::TypeId::of::<I>() == std::any::TypeId::of::<K>() {
            let (av, kind) = Self::type_meta();
            encode(input, Some((&av, &kind)))
        } else {
            encode(input, None)
        }
    }
}
