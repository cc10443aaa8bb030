package wire

import "time"

// Template is an element of GET /templates and, with Builds, the answer of
// GET /templates/{id}. Fields E2B's cloud sends and warren does not track
// (spawn counts, the creating user) are read when present.
type Template struct {
	TemplateID    string            `json:"templateID"`
	BuildID       string            `json:"buildID"`
	CPUCount      int               `json:"cpuCount"`
	MemoryMB      int               `json:"memoryMB"`
	DiskSizeMB    int               `json:"diskSizeMB"`
	Public        bool              `json:"public"`
	Aliases       []string          `json:"aliases"`
	Names         []string          `json:"names"`
	CreatedAt     time.Time         `json:"createdAt"`
	UpdatedAt     time.Time         `json:"updatedAt"`
	EnvdVersion   string            `json:"envdVersion"`
	BuildStatus   string            `json:"buildStatus"`
	SizeBytes     int64             `json:"sizeBytes,omitempty"`
	StartCmd      string            `json:"startCmd,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Builds        []TemplateBuild   `json:"builds,omitempty"`
	SpawnCount    int               `json:"spawnCount,omitempty"`
	LastSpawnedAt *time.Time        `json:"lastSpawnedAt,omitempty"`
	CreatedBy     *TeamUser         `json:"createdBy,omitempty"`
}

// TeamUser is who created a template (E2B's cloud).
type TeamUser struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// TemplateBuild is one build of a template.
type TemplateBuild struct {
	BuildID     string     `json:"buildID"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	UpdatedAt   time.Time  `json:"updatedAt"`
	FinishedAt  *time.Time `json:"finishedAt,omitempty"`
	CPUCount    int        `json:"cpuCount"`
	MemoryMB    int        `json:"memoryMB"`
	DiskSizeMB  int        `json:"diskSizeMB,omitempty"`
	EnvdVersion string     `json:"envdVersion,omitempty"`
	Tags        []string   `json:"tags"`
	Reason      string     `json:"reason,omitempty"`
}

// Tag is a tag of a template and the build it points at
// (GET /templates/{templateID}/tags).
type Tag struct {
	Tag       string    `json:"tag"`
	BuildID   string    `json:"buildID"`
	CreatedAt time.Time `json:"createdAt"`
}

// TagAssignment answers POST /templates/tags.
type TagAssignment struct {
	Tags    []string `json:"tags"`
	BuildID string   `json:"buildID"`
}

// TemplateAlias answers GET /templates/aliases/{alias}.
type TemplateAlias struct {
	TemplateID string `json:"templateID"`
	Public     bool   `json:"public"`
}
