module cursus-conformance-go

go 1.22

require example.invalid/cursus-sdk/go v0.0.0

replace example.invalid/cursus-sdk/go => ../../../ffi-c/go
