module agentrestorechecker

go 1.19
