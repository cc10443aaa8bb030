{{/* The release's base name, at most 63 characters. */}}
{{- define "warren.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Kubernetes' recommended labels; include with (dict "ctx" $ "component" "api"). */}}
{{- define "warren.labels" -}}
{{ include "warren.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: warren
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "warren.selectorLabels" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "warren.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The Secret and key holding WARREN_STORE. */}}
{{- define "warren.storeSecret" -}}
{{- if and (not .Values.postgres.enabled) .Values.postgres.external.existingSecret -}}
{{ .Values.postgres.external.existingSecret }}
{{- else -}}
{{ include "warren.fullname" . }}-store
{{- end -}}
{{- end -}}

{{- define "warren.storeSecretKey" -}}
{{- if and (not .Values.postgres.enabled) .Values.postgres.external.existingSecret -}}
{{ .Values.postgres.external.existingSecretKey }}
{{- else -}}
WARREN_STORE
{{- end -}}
{{- end -}}

{{/* The Secret and key holding WARREN_API_KEY. */}}
{{- define "warren.apiKeySecret" -}}
{{- if .Values.apiKey.existingSecret -}}
{{ .Values.apiKey.existingSecret }}
{{- else -}}
{{ include "warren.fullname" . }}-api-key
{{- end -}}
{{- end -}}

{{- define "warren.apiKeySecretKey" -}}
{{- if .Values.apiKey.existingSecret -}}
{{ .Values.apiKey.existingSecretKey }}
{{- else -}}
WARREN_API_KEY
{{- end -}}
{{- end -}}

{{/* The Secret and key holding WARREN_CLUSTER_SECRET. */}}
{{- define "warren.clusterSecret" -}}
{{- if .Values.clusterSecret.existingSecret -}}
{{ .Values.clusterSecret.existingSecret }}
{{- else -}}
{{ include "warren.fullname" . }}-cluster-secret
{{- end -}}
{{- end -}}

{{- define "warren.clusterSecretKey" -}}
{{- if .Values.clusterSecret.existingSecret -}}
{{ .Values.clusterSecret.existingSecretKey }}
{{- else -}}
WARREN_CLUSTER_SECRET
{{- end -}}
{{- end -}}

{{/* The environment both roles share: the store URL, the admin key and the cluster secret, from Secrets. */}}
{{- define "warren.env" -}}
- name: WARREN_STORE
  valueFrom:
    secretKeyRef:
      name: {{ include "warren.storeSecret" . }}
      key: {{ include "warren.storeSecretKey" . }}
- name: WARREN_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "warren.apiKeySecret" . }}
      key: {{ include "warren.apiKeySecretKey" . }}
- name: WARREN_CLUSTER_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "warren.clusterSecret" . }}
      key: {{ include "warren.clusterSecretKey" . }}
{{- end -}}

{{/* GET /health on the http port. */}}
{{- define "warren.healthGet" -}}
httpGet:
  path: /health
  port: http
{{- end -}}
