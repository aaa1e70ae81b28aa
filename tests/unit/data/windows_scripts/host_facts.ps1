$ProgressPreference = 'SilentlyContinue'
[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false
$ErrorActionPreference = 'Stop'
try {
    $os = Get-CimInstance -ClassName Win32_OperatingSystem
    $cpu = @(Get-CimInstance -ClassName Win32_Processor)
    $defender = $null
    try { $defender = [bool](Get-MpComputerStatus).RealTimeProtectionEnabled } catch { }
    $tuning = $null
    try { $tuning = [string](Get-NetTCPSetting -SettingName Internet).AutoTuningLevelLocal } catch { }
    [Console]::Out.WriteLine((ConvertTo-Json -Compress -InputObject ([ordered]@{
        hostname = [Environment]::MachineName
        caption = [string]$os.Caption
        version = [string]$os.Version
        build = [string]$os.BuildNumber
        last_boot = $os.LastBootUpTime.ToUniversalTime().ToString('o')
        cpus = [int](($cpu | Measure-Object -Property NumberOfLogicalProcessors -Sum).Sum)
        cpu_model = [string]$cpu[0].Name
        defender_realtime = $defender
        autotuning = $tuning
        temp = [IO.Path]::GetTempPath()
    })))
} catch {
    [Console]::Error.WriteLine(($_ | Out-String).Trim())
    exit 1
}
