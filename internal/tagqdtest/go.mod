module github.com/tagq/tagq/internal/tagqdtest

go 1.21
