package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(runAs(context.Background(), os.Args[0], os.Args[1:], os.Stdout, os.Stderr))
}
