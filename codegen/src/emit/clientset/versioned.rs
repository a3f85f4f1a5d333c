//! `clientset::versioned`: the `Clientset`, one accessor per API group-version (client-gen's
//! `clientset.go`).

use super::super::Ctx;
use super::super::text::{Src, Ty};
use super::{client_holder, gv_client_name, simple_fn};
use crate::emit::Module;
use crate::namer::ident;

pub(super) fn clientset(ctx: &Ctx<'_>) -> Module {
    let rt = ctx.rt();
    let mut src = Src::new();
    src.line(&format!("use {rt}::kube;"));
    src.blank();
    src.doc(
        "Gives access to the typed client of every generated API group-version.\n\n\
         Cheap to clone: it holds one `kube::Client`, shared by every client it hands out.",
    );
    client_holder(
        &mut src,
        "Clientset",
        "A clientset over an existing client (a real cluster, or the fake API server).",
        "The underlying client, for raw requests, `kube::Api` and `kube::runtime`.",
        |s| {
            s.blank();
            simple_fn(
                s,
                "A clientset configured from the environment: the kubeconfig (`$KUBECONFIG` or\n\
                 `~/.kube/config`) or, inside a cluster, the service account.",
                "pub async fn try_default",
                &[],
                "kube::Result<Self>",
                "Ok(Self::new(kube::Client::try_default().await?))",
            );
            s.blank();
            simple_fn(
                s,
                "A discovery client over the same connection; call `run().await` on it to learn\n\
                 the server's groups and resources.",
                "pub fn discovery",
                &[Ty::new("&self")],
                "kube::Discovery",
                "kube::Discovery::new(self.client.clone())",
            );
            for pkg in &ctx.model.packages {
                let ty = format!(
                    "self::typed::{}::{}::{}",
                    ident(&pkg.group_module),
                    ident(&pkg.version_module()),
                    gv_client_name(pkg)
                );
                s.blank();
                s.doc(&format!("The client of the `{}` API.", pkg.api_version()));
                if let Some(cfg) = ctx.group_cfg(pkg) {
                    s.line(&cfg);
                }
                s.line("#[inline]");
                s.func(
                    &format!("pub fn {}", ident(&pkg.group_version_snake())),
                    &[],
                    &[Ty::new("&self")],
                    Some(&Ty::new(ty.as_str())),
                    |s| s.call("", &format!("{ty}::new"), &["self.client.clone()"], ""),
                );
            }
        },
    );
    impl_one(
        &mut src,
        "From<kube::Client>",
        "Clientset",
        "fn from(client: kube::Client) -> Self",
        "Self::new(client)",
    );
    impl_one(
        &mut src,
        "From<Clientset>",
        "kube::Client",
        "fn from(clientset: Clientset) -> Self",
        "clientset.client",
    );
    impl_one(
        &mut src,
        "AsRef<kube::Client>",
        "Clientset",
        "fn as_ref(&self) -> &kube::Client",
        "&self.client",
    );
    Module::client(
        &["clientset", "versioned"],
        "The versioned clientset: one typed client per API group-version.",
        src.finish(),
    )
}

/// `impl {tr} for {ty}` with one inlined method, after a blank line.
fn impl_one(src: &mut Src, tr: &str, ty: &str, sig: &str, body: &str) {
    src.blank();
    src.impl_for(tr, ty, |s| {
        s.line("#[inline]");
        s.block(sig, |s| s.line(body));
    });
}
