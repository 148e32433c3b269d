module memstored/bindings/go

go 1.22
