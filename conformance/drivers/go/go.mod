module cursus-conformance-go

go 1.22

require cursus v0.0.0

replace cursus => ../../../ffi-c/go
