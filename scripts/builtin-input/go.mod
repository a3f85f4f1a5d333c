module kube-codegen/scripts/builtin-input

go 1.26
