#!/usr/bin/env bash
# Copyright The kube-codegen Authors.
# SPDX-License-Identifier: Apache-2.0

# k8s.io/code-generator's kube_codegen.sh for Rust API types: the same functions and flags,
# running kube-codegen. A project that calls the Go script switches by changing its `source`
# line:
#
#   source "${CODEGEN_PKG}/kube_codegen.sh"          # Go
#   source "path/to/kube-codegen/scripts/kube_codegen.sh"   # Rust
#
#   kube::codegen::gen_helpers --boilerplate hack/boilerplate.rs.txt src/pkg/apis
#   kube::codegen::gen_client --with-watch --with-applyconfig \
#       --output-dir src/pkg/client --output-pkg crate::pkg::client \
#       --boilerplate hack/boilerplate.rs.txt src/pkg/apis
#
# API types live as in Go, one folder per group and version: <input-dir>/<group>/<version>/*.rs
# with package tags (+groupName=, +k8s:deepcopy-gen=package) in the version's mod.rs. Where Go
# names packages by import path, this script names Rust modules: `--output-pkg` is the module
# path of `--output-dir` in its crate (crate::pkg::client); the module path of <input-dir> is
# derived from where it sits under the crate's src/ (as Go derives import paths with
# `go list`), or given with `--apis-module`.
#
# Functions (see each for its flags):
#   kube::codegen::gen_helpers   deep copy (Clone, kube::Resource) and registration, beside the types
#   kube::codegen::gen_register  registration only (GROUP_NAME, VERSION, resource(), RESOURCES)
#   kube::codegen::gen_client    clientset (+ fake), apply configurations, listers, informers
#   kube::codegen::gen_crd       CustomResourceDefinition YAML (kube-codegen's; Go uses controller-gen)
#   kube::codegen::gen_openapi   not available: fails with the reason
#
# Flags that only Go's generators use and that change nothing here (--extra-peer-dir for
# conversion-gen, --prefers-protobuf, --applyconfig-openapi-schema: extract_* need no OpenAPI
# document) are accepted with a note on stderr; any other unknown flag is refused, named.
#
# kube-codegen is built from the checkout this script belongs to (`cargo build -p
# kube-codegen`), or taken from $KUBE_CODEGEN_BIN when that is set. KUBE_VERBOSE > 0 makes it
# log progress.

set -o errexit
set -o nounset
set -o pipefail

KUBE_CODEGEN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

# Go's client-gen only considers version folders named like these.
KUBE_CODEGEN_VERSION_RE='^v[0-9]+((alpha|beta)[0-9]+)?$'

# The kube-codegen binary: $KUBE_CODEGEN_BIN, or built (once per shell) from this checkout.
function kube::codegen::internal::bin() {
    if [[ -n "${KUBE_CODEGEN_BIN:-}" ]]; then
        echo "${KUBE_CODEGEN_BIN}"
        return 0
    fi
    if [[ -n "${KUBE_CODEGEN_TAG:-}" ]]; then
        echo "note: KUBE_CODEGEN_TAG=${KUBE_CODEGEN_TAG} is ignored: kube-codegen is built from ${KUBE_CODEGEN_ROOT}" >&2
    fi
    cargo build --quiet --manifest-path "${KUBE_CODEGEN_ROOT}/Cargo.toml" -p kube-codegen >&2
    KUBE_CODEGEN_BIN="${CARGO_TARGET_DIR:-${KUBE_CODEGEN_ROOT}/target}/debug/kube-codegen"
    echo "${KUBE_CODEGEN_BIN}"
}

function kube::codegen::internal::grep() {
    grep "$@" \
        --exclude-dir .git \
        --exclude-dir _output \
        --exclude-dir target \
        --exclude-dir vendor
}

# The folders under $2 with a .rs file containing the comment tag $1 (`+genclient`,
# `+k8s:deepcopy-gen=` …, in `//`, `///` or `//!` comments), sorted, one per line.
function kube::codegen::internal::tagged_dirs() {
    local tag="$1" dir="$2"
    ( kube::codegen::internal::grep -l --null \
        -e "^\s*//[/!]\?\s*${tag}" \
        -r "${dir}" \
        --include '*.rs' \
        || true \
    ) | while read -r -d $'\0' F; do dirname "${F}"; done \
      | LC_ALL=C sort -u
}

# `--groups` for kube-codegen from version folders (read on stdin) under the input dir $1:
# "group:v1,v2 group2:v1". With $2 = versioned, folders whose name is no version are skipped
# (as Go's gen_client does); otherwise a folder that is not <input-dir>/<group>/<version> is an
# error.
function kube::codegen::internal::groups() {
    local in_dir="$1" mode="$2"
    local root
    root="$(cd "${in_dir}" && pwd -P)"
    local -A versions=()
    local order=() dir abs rel group version
    while read -r dir; do
        [[ -n "${dir}" ]] || continue
        abs="$(cd "${dir}" && pwd -P)"
        version="$(basename "${abs}")"
        if [[ "${mode}" == versioned ]] && ! grep -E -q "${KUBE_CODEGEN_VERSION_RE}" <<< "${version}"; then
            continue
        fi
        rel="${abs#"${root}"/}"
        if [[ "${rel}" == "${abs}" || "${rel}" != */* || "${rel}" == */*/* ]]; then
            echo "${dir}: API packages must be <input-dir>/<group>/<version> (input-dir ${in_dir})" >&2
            return 1
        fi
        group="${rel%%/*}"
        if [[ -z "${versions[${group}]+set}" ]]; then
            order+=("${group}")
            versions["${group}"]="${version}"
        else
            versions["${group}"]+=",${version}"
        fi
    done
    local spec=""
    for group in "${order[@]+"${order[@]}"}"; do
        spec+="${spec:+ }${group}:${versions[${group}]}"
    done
    echo "${spec}"
}

# The Rust module path of folder $1 in its crate: crate::<path under src/>, the way Go derives
# an import path with `go list`. Fails when the folder is not under a crate's src/.
function kube::codegen::internal::module_of() {
    local dir="$1" abs up
    abs="$(cd "${dir}" && pwd -P)"
    up="${abs}"
    while [[ "${up}" != / ]]; do
        if [[ -f "${up}/Cargo.toml" ]]; then
            if [[ "${abs}" == "${up}/src" ]]; then
                echo "crate"
                return 0
            fi
            if [[ "${abs}" == "${up}/src/"* ]]; then
                local rel="${abs#"${up}"/src/}"
                echo "crate::${rel//\//::}"
                return 0
            fi
            break
        fi
        up="$(dirname "${up}")"
    done
    return 1
}

# Fails unless $2 (the value of flag $1) looks like a Rust module path.
function kube::codegen::internal::check_module() {
    local flag="$1" value="$2"
    if [[ ! "${value}" =~ ^(::)?[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$ ]]; then
        echo "${flag} ${value}: expected a Rust module path such as crate::pkg::client (not a Go import path)" >&2
        return 1
    fi
}

# Parses "--flag value" and "--flag=value": sets FLAG_NAME, FLAG_VALUE and FLAG_SHIFT (how many
# arguments it took). Fails when a flag that needs a value has none.
function kube::codegen::internal::flag() {
    FLAG_NAME="${1%%=*}"
    if [[ "$1" == *=* ]]; then
        FLAG_VALUE="${1#*=}"
        FLAG_SHIFT=1
    elif [[ "$#" -ge 2 ]]; then
        FLAG_VALUE="$2"
        FLAG_SHIFT=2
    else
        echo "${FLAG_NAME} needs a value" >&2
        return 1
    fi
}

function kube::codegen::internal::unused() {
    echo "note: $1 is accepted for compatibility with k8s.io/code-generator and changes nothing here: $2" >&2
}

# Runs one kube-codegen generator: $1 = generator, then its flags.
function kube::codegen::internal::run() {
    local bin
    bin="$(kube::codegen::internal::bin)"
    local verbose=()
    if [[ "${KUBE_VERBOSE:-0}" =~ ^[0-9]+$ && "${KUBE_VERBOSE:-0}" -gt 0 ]]; then
        verbose=(--verbose)
    fi
    "${bin}" "$@" "${verbose[@]+"${verbose[@]}"}"
}

# Fails when the kube-codegen binary has no generator named $1.
function kube::codegen::internal::has_generator() {
    local bin
    bin="$(kube::codegen::internal::bin)"
    "${bin}" "$1" --help >/dev/null 2>&1
}

# Generate tagged helper code beside the types: deep copy (Clone impls, kube::Resource for
# runtime objects: zz_generated_deepcopy.rs) for packages tagged +k8s:deepcopy-gen=, and
# registration (zz_generated_register.rs) for packages tagged +groupName=.
#
# USAGE: kube::codegen::gen_helpers [FLAGS] <input-dir>
#
# <input-dir>
#   The folder holding <group>/<version>/*.rs. A local path.
#
# FLAGS:
#   --boilerplate <string = <kube-codegen>/scripts/boilerplate.rs.txt>
#     The header put at the top of every generated file.
#
#   --extra-peer-dir <string>
#     Accepted, unused (conversion-gen's; kube-codegen has no conversion generator).
#
#   --apis-module <string = derived from <input-dir>>, --runtime-crate <string>
#     kube-codegen only: the module path of <input-dir>, the runtime crate's path.
#
# Validation, defaulter and conversion code (Go's +k8s:validation-gen=, +k8s:defaulter-gen=,
# +k8s:conversion-gen=) have no kube-codegen generator: a package asking for one is reported on
# stderr and the rest is generated.
function kube::codegen::gen_helpers() {
    local in_dir=""
    local boilerplate="${KUBE_CODEGEN_ROOT}/scripts/boilerplate.rs.txt"
    local apis_module=""
    local runtime=()

    while [ "$#" -gt 0 ]; do
        case "${1%%=*}" in
            "--boilerplate")
                kube::codegen::internal::flag "$@"
                boilerplate="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--extra-peer-dir")
                kube::codegen::internal::flag "$@"
                kube::codegen::internal::unused "--extra-peer-dir" "kube-codegen has no conversion generator"
                shift "${FLAG_SHIFT}"
                ;;
            "--apis-module")
                kube::codegen::internal::flag "$@"
                apis_module="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--runtime-crate")
                kube::codegen::internal::flag "$@"
                runtime=(--runtime-crate "${FLAG_VALUE}")
                shift "${FLAG_SHIFT}"
                ;;
            *)
                if [[ "$1" =~ ^-- ]]; then
                    echo "unknown argument: $1" >&2
                    return 1
                fi
                if [ -n "${in_dir}" ]; then
                    echo "too many arguments: $1 (already have ${in_dir})" >&2
                    return 1
                fi
                in_dir="$1"
                shift
                ;;
        esac
    done

    if [ -z "${in_dir}" ]; then
        echo "input-dir argument is required" >&2
        return 1
    fi
    if [ ! -d "${in_dir}" ]; then
        echo "input-dir ${in_dir}: no such directory" >&2
        return 1
    fi
    local common
    common=("--apis-dir" "${in_dir}" "--header-file" "${boilerplate}" "${runtime[@]+"${runtime[@]}"}")
    if [ -z "${apis_module}" ]; then
        apis_module="$(kube::codegen::internal::module_of "${in_dir}")" || true
    fi
    if [ -n "${apis_module}" ]; then
        kube::codegen::internal::check_module --apis-module "${apis_module}"
        common+=("--apis-module" "${apis_module}")
    fi

    local tag
    for tag in '+k8s:validation-gen=' '+k8s:defaulter-gen=' '+k8s:conversion-gen='; do
        local dir
        while read -r dir; do
            [[ -n "${dir}" ]] || continue
            echo "note: ${dir} asks for ${tag%=} code, which kube-codegen does not generate" >&2
        done < <(kube::codegen::internal::tagged_dirs "${tag}" "${in_dir}")
    done

    local groups count
    groups="$(kube::codegen::internal::tagged_dirs '+k8s:deepcopy-gen=' "${in_dir}" \
        | kube::codegen::internal::groups "${in_dir}" any)"
    if [ -n "${groups}" ]; then
        count="$(wc -w <<< "${groups//,/ }")"
        echo "Generating deepcopy code for $((count)) targets"
        kube::codegen::internal::run deepcopy "${common[@]}" --groups "${groups}"
    fi

    kube::codegen::gen_register --boilerplate "${boilerplate}" \
        ${apis_module:+--apis-module "${apis_module}"} "${runtime[@]+"${runtime[@]}"}" "${in_dir}"
}

# Generate registration code (zz_generated_register.rs: GROUP_NAME, VERSION, resource(), the
# RESOURCES table) for packages tagged +groupName=.
#
# USAGE: kube::codegen::gen_register [FLAGS] <input-dir>
#
# FLAGS:
#   --boilerplate <string = <kube-codegen>/scripts/boilerplate.rs.txt>
#   --apis-module <string>, --runtime-crate <string>   (kube-codegen only, as for gen_helpers)
function kube::codegen::gen_register() {
    local in_dir=""
    local boilerplate="${KUBE_CODEGEN_ROOT}/scripts/boilerplate.rs.txt"
    local apis_module=""
    local runtime=()

    while [ "$#" -gt 0 ]; do
        case "${1%%=*}" in
            "--boilerplate")
                kube::codegen::internal::flag "$@"
                boilerplate="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--apis-module")
                kube::codegen::internal::flag "$@"
                apis_module="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--runtime-crate")
                kube::codegen::internal::flag "$@"
                runtime=(--runtime-crate "${FLAG_VALUE}")
                shift "${FLAG_SHIFT}"
                ;;
            *)
                if [[ "$1" =~ ^-- ]]; then
                    echo "unknown argument: $1" >&2
                    return 1
                fi
                if [ -n "${in_dir}" ]; then
                    echo "too many arguments: $1 (already have ${in_dir})" >&2
                    return 1
                fi
                in_dir="$1"
                shift
                ;;
        esac
    done

    if [ -z "${in_dir}" ]; then
        echo "input-dir argument is required" >&2
        return 1
    fi
    if [ ! -d "${in_dir}" ]; then
        echo "input-dir ${in_dir}: no such directory" >&2
        return 1
    fi
    if [ -z "${apis_module}" ]; then
        apis_module="$(kube::codegen::internal::module_of "${in_dir}")" || true
    fi
    local common=("--apis-dir" "${in_dir}" "--header-file" "${boilerplate}" "${runtime[@]+"${runtime[@]}"}")
    if [ -n "${apis_module}" ]; then
        kube::codegen::internal::check_module --apis-module "${apis_module}"
        common+=("--apis-module" "${apis_module}")
    fi

    local groups count
    groups="$(kube::codegen::internal::tagged_dirs '+groupName=' "${in_dir}" \
        | kube::codegen::internal::groups "${in_dir}" any)"
    if [ -n "${groups}" ]; then
        count="$(wc -w <<< "${groups//,/ }")"
        echo "Generating register code for $((count)) targets"
        kube::codegen::internal::run register "${common[@]}" --groups "${groups}"
    fi
}

# Generate client code: the versioned clientset and its fake, and optionally apply
# configurations, listers and informers, for the packages with +genclient types. When
# kube::codegen::gen_crd has written zz_generated_crd.rs under <input-dir>, the fake clientset
# installs the kinds' CRDs (schemas included).
#
# USAGE: kube::codegen::gen_client [FLAGS] <input-dir>
#
# <input-dir>
#   The folder holding <group>/<version>/*.rs. Only version folders named like v1, v1beta1 or
#   v2alpha1 that contain +genclient are considered, as in Go.
#
# FLAGS:
#   --one-input-api <string>
#     Only the API under <input-dir>/<string> (a group, or group/version).
#
#   --output-dir <string>
#     The folder of the client tree (required): clientset/, applyconfiguration/, listers/,
#     informers/ and a mod.rs are written under it.
#
#   --output-pkg <string = derived from --output-dir>
#     The Rust module path of --output-dir in its crate (crate::pkg::client). Go requires it;
#     here it is derived, as for <input-dir>, when --output-dir is under the crate's src/.
#
#   --boilerplate <string = <kube-codegen>/scripts/boilerplate.rs.txt>
#     The header put at the top of every generated file.
#
#   --clientset-name <string = "clientset">, --versioned-name <string = "versioned">,
#   --listers-name <string = "listers">, --informers-name <string = "informers">,
#   --applyconfig-name <string = "applyconfiguration">
#     The folder names of the generated trees. kube-codegen writes them with the default names
#     only: another value is refused.
#
#   --with-applyconfig
#     Also generate apply configurations (applyconfiguration/<group>/<version>/<kind>.rs), the
#     typed clients' apply/apply_status verbs and extract_<kind> functions.
#
#   --applyconfig-externals <string>
#     Passed to the applyconfiguration generator as --external-applyconfigurations: a
#     comma-separated list of <type path>=<apply configuration module> (Go's
#     <pkg>.<Type>:<pkg>, in Rust paths, which hold ':'), <module path>::*=<module>, or
#     kube-codegen-kubernetes (every built-in type to kube-codegen-kubernetes' configurations).
#
#   --applyconfig-openapi-schema <string>
#     Accepted, unused: extract_<kind> needs no OpenAPI document here.
#
#   --with-watch
#     Also generate listers and informers.
#
#   --plural-exceptions <string = "">
#     Comma-separated Type:PluralizedType exceptions to the plural rules.
#
#   --prefers-protobuf
#     Accepted, unused: kube-rs clients speak JSON.
#
#   --apis-module <string = derived from <input-dir>>, --runtime-crate <string>
#     kube-codegen only: the module path of <input-dir>, the runtime crate's path.
function kube::codegen::gen_client() {
    local in_dir=""
    local one_input_api=""
    local out_dir=""
    local out_pkg=""
    local clientset_subdir="clientset"
    local clientset_versioned_name="versioned"
    local applyconfig="false"
    local applyconfig_subdir="applyconfiguration"
    local applyconfig_externals=""
    local watchable="false"
    local listers_subdir="listers"
    local informers_subdir="informers"
    local boilerplate="${KUBE_CODEGEN_ROOT}/scripts/boilerplate.rs.txt"
    local plural_exceptions=""
    local apis_module=""
    local runtime=()

    while [ "$#" -gt 0 ]; do
        case "${1%%=*}" in
            "--one-input-api")
                kube::codegen::internal::flag "$@"
                one_input_api="/${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--output-dir")
                kube::codegen::internal::flag "$@"
                out_dir="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--output-pkg")
                kube::codegen::internal::flag "$@"
                out_pkg="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--boilerplate")
                kube::codegen::internal::flag "$@"
                boilerplate="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--clientset-name")
                kube::codegen::internal::flag "$@"
                clientset_subdir="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--versioned-name")
                kube::codegen::internal::flag "$@"
                clientset_versioned_name="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--with-applyconfig")
                applyconfig="true"
                shift
                ;;
            "--applyconfig-name")
                kube::codegen::internal::flag "$@"
                applyconfig_subdir="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--applyconfig-externals")
                kube::codegen::internal::flag "$@"
                applyconfig_externals="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--applyconfig-openapi-schema")
                kube::codegen::internal::flag "$@"
                kube::codegen::internal::unused "--applyconfig-openapi-schema" "extract_<kind> reads the types, not an OpenAPI document"
                shift "${FLAG_SHIFT}"
                ;;
            "--with-watch")
                watchable="true"
                shift
                ;;
            "--listers-name")
                kube::codegen::internal::flag "$@"
                listers_subdir="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--informers-name")
                kube::codegen::internal::flag "$@"
                informers_subdir="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--plural-exceptions")
                kube::codegen::internal::flag "$@"
                plural_exceptions="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--prefers-protobuf")
                kube::codegen::internal::unused "--prefers-protobuf" "kube-rs clients speak JSON"
                shift
                ;;
            "--apis-module")
                kube::codegen::internal::flag "$@"
                apis_module="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--runtime-crate")
                kube::codegen::internal::flag "$@"
                runtime=(--runtime-crate "${FLAG_VALUE}")
                shift "${FLAG_SHIFT}"
                ;;
            *)
                if [[ "$1" =~ ^-- ]]; then
                    echo "unknown argument: $1" >&2
                    return 1
                fi
                if [ -n "${in_dir}" ]; then
                    echo "too many arguments: $1 (already have ${in_dir})" >&2
                    return 1
                fi
                in_dir="$1"
                shift
                ;;
        esac
    done

    if [ -z "${in_dir}" ]; then
        echo "input-dir argument is required" >&2
        return 1
    fi
    if [ ! -d "${in_dir}" ]; then
        echo "input-dir ${in_dir}: no such directory" >&2
        return 1
    fi
    if [ -z "${out_dir}" ]; then
        echo "--output-dir is required" >&2
        return 1
    fi
    local name var default
    for name in clientset-name:clientset_subdir:clientset versioned-name:clientset_versioned_name:versioned \
        listers-name:listers_subdir:listers informers-name:informers_subdir:informers \
        applyconfig-name:applyconfig_subdir:applyconfiguration; do
        IFS=: read -r name var default <<< "${name}"
        if [[ "${!var}" != "${default}" ]]; then
            echo "--${name} ${!var}: kube-codegen writes this folder as \"${default}\" only" >&2
            return 1
        fi
    done

    mkdir -p "${out_dir}"
    if [ -z "${out_pkg}" ]; then
        if ! out_pkg="$(kube::codegen::internal::module_of "${out_dir}")"; then
            echo "--output-pkg is required (the Rust module path of ${out_dir}, such as crate::pkg::client)" >&2
            return 1
        fi
    fi
    kube::codegen::internal::check_module --output-pkg "${out_pkg}"
    if [ -z "${apis_module}" ]; then
        if ! apis_module="$(kube::codegen::internal::module_of "${in_dir}")"; then
            echo "${in_dir} is not under a crate's src/: pass --apis-module (its Rust module path, such as crate::pkg::apis)" >&2
            return 1
        fi
    fi
    kube::codegen::internal::check_module --apis-module "${apis_module}"

    if [ ! -d "${in_dir}${one_input_api}" ]; then
        echo "--one-input-api ${one_input_api#/}: no such directory under ${in_dir}" >&2
        return 1
    fi
    local groups
    groups="$(kube::codegen::internal::tagged_dirs '+genclient' "${in_dir}${one_input_api}" \
        | kube::codegen::internal::groups "${in_dir}" versioned)"
    if [ -z "${groups}" ]; then
        return 0
    fi
    local count
    count="$(wc -w <<< "${groups//,/ }")"

    local common=(--apis-dir "${in_dir}" --output-dir "${out_dir}" --output-module "${out_pkg}"
        --apis-module "${apis_module}" --header-file "${boilerplate}" --groups "${groups}"
        "${runtime[@]+"${runtime[@]}"}")
    if [ -n "${plural_exceptions}" ]; then
        common+=(--plural-exceptions "${plural_exceptions}")
    fi

    if [ "${applyconfig}" == "true" ]; then
        if ! kube::codegen::internal::has_generator applyconfiguration; then
            echo "--with-applyconfig: this kube-codegen ($(kube::codegen::internal::bin)) has no applyconfiguration generator" >&2
            return 1
        fi
        echo "Generating applyconfig code for $((count)) targets"
        local externals=()
        if [ -n "${applyconfig_externals}" ]; then
            externals=(--external-applyconfigurations "${applyconfig_externals}")
        fi
        kube::codegen::internal::run applyconfiguration "${common[@]}" "${externals[@]+"${externals[@]}"}"
    fi

    # The fake clientset installs the kinds' CRDs (so the in-memory server merges apply by their
    # schemas) when kube::codegen::gen_crd wrote their CustomResourceExt impls beside the types.
    local crd_impls=false
    if [ -n "$(find "${in_dir}${one_input_api}" -name zz_generated_crd.rs -print -quit)" ]; then
        crd_impls=true
    fi

    echo "Generating client code for $((count)) targets"
    kube::codegen::internal::run client "${common[@]}" --apply-configurations "${applyconfig}" \
        --crd-impls "${crd_impls}"

    if [ "${watchable}" == "true" ]; then
        echo "Generating lister code for $((count)) targets"
        kube::codegen::internal::run lister "${common[@]}"

        echo "Generating informer code for $((count)) targets"
        kube::codegen::internal::run informer "${common[@]}"
    fi
}

# Generate CustomResourceDefinitions (kube-codegen's own: Go projects use controller-gen) for
# the +genclient kinds, and their kube::CustomResourceExt impls beside the types
# (zz_generated_crd.rs).
#
# USAGE: kube::codegen::gen_crd [FLAGS] <input-dir>
#
# FLAGS:
#   --crd-dir <string = "crd">
#     The folder the CRD YAML files go to.
#   --crd-file-name <string = "{plural}.{group}.yaml">
#     The file name template; {plural}, {group}, {singular} and {kind} are replaced.
#   --boilerplate <string = <kube-codegen>/scripts/boilerplate.rs.txt>
#   --apis-module <string>, --runtime-crate <string>   (as for gen_helpers)
function kube::codegen::gen_crd() {
    local in_dir=""
    local boilerplate="${KUBE_CODEGEN_ROOT}/scripts/boilerplate.rs.txt"
    local apis_module=""
    local crd_dir="crd"
    local extra=()

    while [ "$#" -gt 0 ]; do
        case "${1%%=*}" in
            "--boilerplate")
                kube::codegen::internal::flag "$@"
                boilerplate="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--crd-dir")
                kube::codegen::internal::flag "$@"
                crd_dir="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            "--crd-file-name" | "--runtime-crate")
                kube::codegen::internal::flag "$@"
                extra+=("${FLAG_NAME}" "${FLAG_VALUE}")
                shift "${FLAG_SHIFT}"
                ;;
            "--apis-module")
                kube::codegen::internal::flag "$@"
                apis_module="${FLAG_VALUE}"
                shift "${FLAG_SHIFT}"
                ;;
            *)
                if [[ "$1" =~ ^-- ]]; then
                    echo "unknown argument: $1" >&2
                    return 1
                fi
                if [ -n "${in_dir}" ]; then
                    echo "too many arguments: $1 (already have ${in_dir})" >&2
                    return 1
                fi
                in_dir="$1"
                shift
                ;;
        esac
    done

    if [ -z "${in_dir}" ]; then
        echo "input-dir argument is required" >&2
        return 1
    fi
    if [ ! -d "${in_dir}" ]; then
        echo "input-dir ${in_dir}: no such directory" >&2
        return 1
    fi
    if [ -z "${apis_module}" ]; then
        apis_module="$(kube::codegen::internal::module_of "${in_dir}")" || true
    fi
    local common=(--apis-dir "${in_dir}" --header-file "${boilerplate}" --crd-dir "${crd_dir}"
        "${extra[@]+"${extra[@]}"}")
    if [ -n "${apis_module}" ]; then
        kube::codegen::internal::check_module --apis-module "${apis_module}"
        common+=(--apis-module "${apis_module}")
    fi
    local groups count
    groups="$(kube::codegen::internal::tagged_dirs '+genclient' "${in_dir}" \
        | kube::codegen::internal::groups "${in_dir}" versioned)"
    if [ -n "${groups}" ]; then
        count="$(wc -w <<< "${groups//,/ }")"
        echo "Generating CRDs for $((count)) targets"
        kube::codegen::internal::run crd "${common[@]}" --groups "${groups}"
    fi
}

# Go's OpenAPI generator (k8s.io/kube-openapi's openapi-gen) has no kube-codegen counterpart:
# CRD schemas come from kube::codegen::gen_crd, and extract_<kind> needs no OpenAPI document.
function kube::codegen::gen_openapi() {
    echo "kube::codegen::gen_openapi: kube-codegen has no OpenAPI generator (CRD schemas come from kube::codegen::gen_crd)" >&2
    return 1
}
