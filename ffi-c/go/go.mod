module example.invalid/cursus-sdk/go

go 1.22
