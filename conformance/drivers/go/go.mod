module cursus-conformance-go

go 1.22

require example.invalid/cursus-sdk/go/cursus v0.0.0

replace example.invalid/cursus-sdk/go/cursus => ../../../ffi-c/go
