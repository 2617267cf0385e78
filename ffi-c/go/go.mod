module example.invalid/cursus-sdk/go/cursus

go 1.22
