module cursus-sdk/tools/docs/godoc

go 1.22
