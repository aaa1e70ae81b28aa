$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$global:LASTEXITCODE = $null
& 'NTttcp.exe' '-r' '-m' '1,0,198.18.0.1' '-a' '4'
if ($null -eq $global:LASTEXITCODE) { exit 127 }
exit $global:LASTEXITCODE
