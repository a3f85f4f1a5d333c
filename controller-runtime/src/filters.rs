//! Authentication and authorization of metrics requests against the API server
//! (controller-runtime's `pkg/metrics/filters.WithAuthenticationAndAuthorization`), used by the
//! [`Manager`](crate::Manager) when [`metrics_secure`](crate::ManagerBuilder::metrics_secure) is
//! on, and usable alone in front of any HTTP handler.
//!
//! For each request:
//!
//! 1. the bearer token of the `Authorization` header is sent to the API server in a
//!    `TokenReview` (`authentication.k8s.io/v1`). No token, or a token the server does not
//!    authenticate: **401** `Unauthorized`. The review itself failing: **500**
//!    `Authentication failed`.
//! 2. the user it names (name, uid, groups, extra) is checked with a `SubjectAccessReview`
//!    (`authorization.k8s.io/v1`) for the non-resource URL of the request path and the verb of
//!    its method in lower case (`get` for `GET /metrics`). Not allowed: **403**
//!    `Authorization denied for user <name>`. The review failing: **500**
//!    `Authorization for user <name> failed`.
//!
//! Answers are cached as controller-runtime's delegating authenticator and authorizer cache
//! them: token reviews for 1 minute, allowed access for 5 minutes, denied access for 30
//! seconds.
//!
//! The manager's own service account needs `create` on `tokenreviews` and
//! `subjectaccessreviews`; a scraper (Prometheus) needs `get` on the non-resource URL
//! `/metrics`.
//!
//! ```no_run
//! use kube_controller_runtime::filters::AuthenticationAndAuthorization;
//!
//! # async fn demo(client: kube::Client) {
//! let filter = AuthenticationAndAuthorization::new(client);
//! let header = http::HeaderValue::from_static("Bearer some-token");
//! match filter.check(&http::Method::GET, "/metrics", Some(&header)).await {
//!     Ok(user) => println!("{} may read /metrics", user.name),
//!     Err(refused) => println!("{}: {refused}", refused.status()),
//! }
//! # }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use http::StatusCode;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};
use kube_codegen_runtime::resource::ResourceInfo;
use parking_lot::Mutex;

/// The two review kinds the filter asks for, as an API server registers them: give them to an
/// in-memory server (`FakeApiServer::with_resources(REVIEW_RESOURCES)`) that a manager with
/// secure metrics talks to, or its scrapes are answered 500.
pub const REVIEW_RESOURCES: &[ResourceInfo] = &[
    ResourceInfo {
        group: "authentication.k8s.io",
        version: "v1",
        kind: "TokenReview",
        list_kind: "",
        plural: "tokenreviews",
        singular: "",
        namespaced: false,
        subresources: &[],
        short_names: &[],
    },
    ResourceInfo {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SubjectAccessReview",
        list_kind: "",
        plural: "subjectaccessreviews",
        singular: "",
        namespaced: false,
        subresources: &[],
        short_names: &[],
    },
];

/// How long a token review's answer is reused (controller-runtime: `CacheTTL`, 1 minute).
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(60);
/// How long an allowed access review is reused (`AllowCacheTTL`, 5 minutes).
pub const ALLOW_CACHE_TTL: Duration = Duration::from_secs(300);
/// How long a denied access review is reused (`DenyCacheTTL`, 30 seconds).
pub const DENY_CACHE_TTL: Duration = Duration::from_secs(30);
/// At most this many answers are cached per kind; a full cache is emptied of expired entries,
/// then cleared.
const CACHE_ENTRIES: usize = 1024;

/// An authenticated user, as the `TokenReview` names it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UserInfo {
    /// The user name (`system:serviceaccount:monitoring:prometheus`).
    pub name: String,
    /// The user's uid.
    pub uid: Option<String>,
    /// The user's groups.
    pub groups: Vec<String>,
    /// Extra attributes the authenticator gave.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// Why a request was refused. [`status`](Self::status) is the HTTP status to answer with and
/// the `Display` text the body, as controller-runtime writes them.
///
/// [`Unauthorized`](Self::Unauthorized) and [`Forbidden`](Self::Forbidden) are answers, not
/// failures: the client must bring another token or permission. The two `…Failed` variants
/// are failures to reach or use the API server; the client may retry.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// No bearer token, or one the API server did not authenticate (401).
    #[error("Unauthorized")]
    Unauthorized,
    /// The user may not perform this verb on this path (403).
    #[error("Authorization denied for user {user}")]
    Forbidden {
        /// The user name.
        user: String,
        /// The API server's reason, if it gave one (logged, not sent).
        reason: String,
    },
    /// The `TokenReview` could not be made (500).
    #[error("Authentication failed")]
    AuthenticationFailed(#[source] kube::Error),
    /// The `SubjectAccessReview` could not be made (500).
    #[error("Authorization for user {user} failed")]
    AuthorizationFailed {
        /// The user name.
        user: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
}

impl FilterError {
    /// The HTTP status to answer with: 401, 403 or 500.
    pub fn status(&self) -> StatusCode {
        match self {
            FilterError::Unauthorized => StatusCode::UNAUTHORIZED,
            FilterError::Forbidden { .. } => StatusCode::FORBIDDEN,
            FilterError::AuthenticationFailed(_) | FilterError::AuthorizationFailed { .. } => {
                StatusCode::INTERNAL_SERVER_ERROR
            }
        }
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct AccessKey {
    user: UserInfo,
    verb: String,
    path: String,
}

struct Cache<K, V> {
    entries: HashMap<K, (Instant, V)>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Cache<K, V> {
    fn new() -> Self {
        Cache {
            entries: HashMap::new(),
        }
    }

    fn get(&self, k: &K) -> Option<V> {
        self.entries
            .get(k)
            .filter(|(until, _)| *until > Instant::now())
            .map(|(_, v)| v.clone())
    }

    fn put(&mut self, k: K, v: V, ttl: Duration) {
        if self.entries.len() >= CACHE_ENTRIES {
            let now = Instant::now();
            self.entries.retain(|_, (until, _)| *until > now);
            if self.entries.len() >= CACHE_ENTRIES {
                self.entries.clear();
            }
        }
        self.entries.insert(k, (Instant::now() + ttl, v));
    }
}

/// Authenticates requests with `TokenReview`s and authorizes them with `SubjectAccessReview`s
/// through a client; see the [module docs](self). Cheap to share behind an `Arc`.
pub struct AuthenticationAndAuthorization {
    client: kube::Client,
    tokens: Mutex<Cache<String, Option<UserInfo>>>,
    access: Mutex<Cache<AccessKey, Result<(), String>>>,
}

impl std::fmt::Debug for AuthenticationAndAuthorization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthenticationAndAuthorization")
            .finish_non_exhaustive()
    }
}

/// The token of `Authorization: Bearer <token>` (the scheme in any case), as kube-apiserver's
/// bearer token authenticator reads it.
fn bearer_token(header: Option<&http::HeaderValue>) -> Option<&str> {
    let value = header?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains(' '))
        .then_some(token)
}

impl AuthenticationAndAuthorization {
    /// Reviews through `client` (it needs `create` on `tokenreviews` and
    /// `subjectaccessreviews`). Give it a client that is not leader-fenced: reviews are
    /// `POST`s, made on every replica.
    pub fn new(client: kube::Client) -> Self {
        AuthenticationAndAuthorization {
            client,
            tokens: Mutex::new(Cache::new()),
            access: Mutex::new(Cache::new()),
        }
    }

    /// Authenticates the bearer token in `authorization` and authorizes its user for `method`
    /// on the non-resource URL `path`: the user, or why the request is refused.
    pub async fn check(
        &self,
        method: &http::Method,
        path: &str,
        authorization: Option<&http::HeaderValue>,
    ) -> Result<UserInfo, FilterError> {
        let token = bearer_token(authorization).ok_or(FilterError::Unauthorized)?;
        let user = self
            .authenticate(token)
            .await?
            .ok_or(FilterError::Unauthorized)?;
        let key = AccessKey {
            user,
            verb: method.as_str().to_ascii_lowercase(),
            path: path.to_string(),
        };
        let cached = self.access.lock().get(&key);
        let decision = match cached {
            Some(d) => d,
            None => {
                let d = self.authorize(&key).await?;
                let ttl = if d.is_ok() {
                    ALLOW_CACHE_TTL
                } else {
                    DENY_CACHE_TTL
                };
                self.access.lock().put(key.clone(), d.clone(), ttl);
                d
            }
        };
        match decision {
            Ok(()) => Ok(key.user),
            Err(reason) => Err(FilterError::Forbidden {
                user: key.user.name,
                reason,
            }),
        }
    }

    async fn authenticate(&self, token: &str) -> Result<Option<UserInfo>, FilterError> {
        if let Some(cached) = self.tokens.lock().get(&token.to_string()) {
            return Ok(cached);
        }
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let answer = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(FilterError::AuthenticationFailed)?;
        let user = answer
            .status
            .filter(|s| s.authenticated == Some(true))
            .and_then(|s| s.user)
            .and_then(|u| {
                Some(UserInfo {
                    name: u.username.filter(|n| !n.is_empty())?,
                    uid: u.uid,
                    groups: u.groups.unwrap_or_default(),
                    extra: u.extra.unwrap_or_default().into_iter().collect(),
                })
            });
        if user.is_none() {
            tracing::debug!("metrics request: token not authenticated");
        }
        self.tokens
            .lock()
            .put(token.to_string(), user.clone(), TOKEN_CACHE_TTL);
        Ok(user)
    }

    async fn authorize(&self, key: &AccessKey) -> Result<Result<(), String>, FilterError> {
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: Some(key.user.name.clone()),
                uid: key.user.uid.clone(),
                groups: Some(key.user.groups.clone()),
                extra: Some(key.user.extra.clone().into_iter().collect()),
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some(key.path.clone()),
                    verb: Some(key.verb.clone()),
                }),
                resource_attributes: None,
            },
            ..SubjectAccessReview::default()
        };
        let answer = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await
            .map_err(|source| FilterError::AuthorizationFailed {
                user: key.user.name.clone(),
                source,
            })?;
        let status = answer.status.unwrap_or_default();
        if status.allowed && status.denied != Some(true) {
            Ok(Ok(()))
        } else {
            let reason = status.reason.unwrap_or_default();
            tracing::debug!(user = %key.user.name, path = %key.path, %reason, "metrics request denied");
            Ok(Err(reason))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn bearer_tokens_as_kube_apiserver_reads_them() {
        let h = |s: &'static str| http::HeaderValue::from_static(s);
        assert_eq!(bearer_token(Some(&h("Bearer abc"))), Some("abc"));
        assert_eq!(bearer_token(Some(&h("bearer abc"))), Some("abc"));
        assert_eq!(bearer_token(Some(&h("Basic abc"))), None);
        assert_eq!(bearer_token(Some(&h("Bearer "))), None);
        assert_eq!(bearer_token(Some(&h("Bearer a b"))), None);
        assert_eq!(bearer_token(None), None);
    }
}
