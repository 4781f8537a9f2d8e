package main

import "github.com/urfave/cli/v3"

func synthCommand() *cli.Command {
	return &cli.Command{Name: "synth", Usage: "write a synthetic sweep", Hidden: true}
}
