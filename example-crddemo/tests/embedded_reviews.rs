//! `crddemo --embedded` serves the review kinds secure metrics use: a scrape of
//! `--metrics-bind-address` (HTTPS, TokenReview + SubjectAccessReview by default) is answered
//! 401/403/200, never 500 for want of the reviews.

use example_crddemo::embedded::Embedded;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_server_answers_token_and_access_reviews() {
    let dir = ok(tempfile::tempdir());
    let embedded = ok(Embedded::start(0, &dir.path().join("kubeconfig")).await);
    let client = ok(embedded.client().await);

    let review = TokenReview {
        spec: TokenReviewSpec {
            token: "not-the-server-token".into(),
            audiences: None,
        },
        ..TokenReview::default()
    };
    let answer = ok(Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await);
    let status = answer.status.unwrap_or_default();
    assert_ne!(status.authenticated, Some(true), "{status:?}");

    let access = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("admin".into()),
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/metrics".into()),
                verb: Some("get".into()),
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let answer = ok(Api::<SubjectAccessReview>::all(client)
        .create(&PostParams::default(), &access)
        .await);
    assert!(answer.status.unwrap_or_default().allowed);
    embedded.shutdown().await;
}
