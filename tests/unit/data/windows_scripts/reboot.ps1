$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$global:LASTEXITCODE = $null
& 'shutdown.exe' '/r' '/t' '5' '/f' '/d' 'p:4:1'
if ($null -eq $global:LASTEXITCODE) { exit 127 }
exit $global:LASTEXITCODE
