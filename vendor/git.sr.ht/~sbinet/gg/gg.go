// Copyright ©2022 The gg Authors. All rights reserved.
// Use of this source code is governed by a MIT-style
// license that can be found in the LICENSE file.

//go:generate go tool github.com/campoy/embedmd -w README.md

// Package gg provides a simple API for rendering 2D graphics in pure Go.
package gg // import "git.sr.ht/~sbinet/gg"
