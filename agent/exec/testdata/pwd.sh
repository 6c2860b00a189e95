#!/bin/sh
pwd
